/**
 * IAM role ARNs, `arn:<partition>:iam::<account>:role/<path/><name>`, read field by field
 * so that a wrong one is reported by what is wrong with it, not just "does not match".
 * Partitions: the three autonode can launch in (aws, aws-cn, aws-us-gov); the isolated
 * ones (aws-iso*) are not served.
 */

export const ROLE_ARN_PARTITIONS = ['aws', 'aws-cn', 'aws-us-gov'] as const;
export type RoleArnPartition = (typeof ROLE_ARN_PARTITIONS)[number];

export interface RoleArn {
  partition: RoleArnPartition;
  accountId: string;
  /** the role's path, '/' when it has none (IAM's default) */
  path: string;
  name: string;
}

export type RoleArnParse = { ok: true; arn: RoleArn } | { ok: false; problem: string };

const isPartition = (value: string): value is RoleArnPartition => (ROLE_ARN_PARTITIONS as readonly string[]).includes(value);

/** IAM's limits: a role name is 1-64 of [\w+=,.@-]; a path is '/' or /segments/ of printable ASCII. */
const ROLE_NAME = /^[\w+=,.@-]{1,64}$/;
const ROLE_PATH_SEGMENT = /^[\w+=,.@-]+$/;
const MAX_ARN_LENGTH = 2048;

export function parseRoleArn(value: string): RoleArnParse {
  const fail = (problem: string): RoleArnParse => ({ ok: false, problem });
  if (value.length > MAX_ARN_LENGTH) return fail(`it is ${value.length} characters long; an ARN has at most ${MAX_ARN_LENGTH}`);
  if (/\s/.test(value)) return fail('it contains white space');
  const parts = value.split(':');
  if (parts[0] !== 'arn' || parts.length < 6) return fail('it is not an ARN (arn:<partition>:iam::<account>:role/<name>)');
  if (parts.length > 6) return fail('it has more than six ":"-separated parts; a role ARN is arn:<partition>:iam::<account>:role/<name>');
  const [, partition = '', service = '', region = '', accountId = '', resource = ''] = parts;
  if (!isPartition(partition)) return fail(`partition "${partition}" is not one of ${ROLE_ARN_PARTITIONS.join(', ')}`);
  if (service !== 'iam') return fail(`it names the "${service}" service; a role ARN names "iam"`);
  if (region !== '') return fail(`it names region "${region}"; IAM is global, a role ARN has an empty region (iam::)`);
  if (!/^\d{12}$/.test(accountId)) return fail(`account "${accountId}" is not a 12-digit AWS account ID`);
  if (!resource.startsWith('role/')) return fail(`resource "${resource}" is not a role; a role ARN ends in role/<name>`);
  const segments = resource.slice('role/'.length).split('/');
  const name = segments.pop() ?? '';
  if (!ROLE_NAME.test(name)) return fail(`role name "${name}" is not 1-64 characters of letters, digits and +=,.@_-`);
  if (!segments.every((s) => ROLE_PATH_SEGMENT.test(s))) return fail(`role path "/${segments.join('/')}/" has an empty or invalid segment`);
  return { ok: true, arn: { partition, accountId, path: segments.length === 0 ? '/' : `/${segments.join('/')}/`, name } };
}

/**
 * The partition a region belongs to, for the three partitions served: a role in one
 * partition cannot be assumed to act in another's regions.
 */
export function partitionOfRegion(region: string): RoleArnPartition {
  if (region.startsWith('cn-')) return 'aws-cn';
  if (region.startsWith('us-gov-')) return 'aws-us-gov';
  return 'aws';
}

/**
 * A fault-injecting HTTP proxy in front of moto (local-stack.md §5, "Fault injection"):
 * moto never runs out of capacity, never throttles and never loses a response, so tests
 * put this between the EC2 client and moto to make it do so, and then assert on what the
 * proxy recorded — that the fault really happened and the retry really came.
 *
 * - Exhausted pools: CreateFleet overrides for a chosen (instanceType, zone, capacityType)
 *   are removed before forwarding, and reported the way EC2 does, in the response's
 *   `errorSet` (EC2 API reference: CreateFleetError — launchTemplateAndOverrides,
 *   lifecycle, errorCode, errorMessage), each naming its own config's launch template. A
 *   LaunchTemplateConfig left without overrides is removed too, and the rest renumbered:
 *   moto would launch such a config's bare template. When nothing is left, moto is not
 *   called and the proxy answers with errors only.
 * - One-shot rules per action: RequestLimitExceeded (503), InternalError (500),
 *   UnauthorizedOperation (403), and "drop the response": forwarded, moto acts, and the
 *   client's socket is destroyed before a byte of the answer is written; and "hold": the
 *   request waits until the rule's `hold` resolves, then goes to moto as usual (a call the
 *   test keeps in flight, e.g. while it stops the worker that made it).
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mulberry32 } from './random';

export type PoolCapacityType = 'spot' | 'on-demand';

export interface ExhaustedPool {
  instanceType: string;
  zone: string;
  capacityType: PoolCapacityType;
  /** default InsufficientInstanceCapacity; quota codes such as MaxSpotInstanceCountExceeded work too */
  errorCode?: string;
}

export type FaultKind = 'throttle' | 'server-error' | 'unauthorized' | 'drop-response' | 'hold';

export interface FaultRule {
  kind: FaultKind;
  /** EC2 action, e.g. CreateFleet */
  action: string;
  /** how many matching requests to affect (default 1) */
  times?: number;
  /** drop-response only: runs after moto answered and before the answer is lost (e.g. kill the worker) */
  beforeDrop?: () => Promise<void> | void;
  /** hold only: the request is forwarded once this resolves */
  hold?: () => Promise<void>;
}

/**
 * Seeded random faults (the chaos scale run): each request not taken by a one-shot rule is
 * throttled with probability `throttle`, else answered 500 with probability `serverError`.
 * One draw per request from mulberry32(seed), so the same seed and the same request order
 * give the same faults; the order of concurrent requests is not fixed, so a run logs the
 * faults it injected (`injected`) rather than promising to replay them.
 */
export interface RandomFaults {
  seed: number;
  throttle: number;
  serverError: number;
  /** only these actions (default every action) */
  actions?: readonly string[];
}

/** Which fault, if any, one draw in [0, 1) stands for: [0, throttle) throttles, the next `serverError` 500s. */
export function randomFaultFor(draw: number, faults: Pick<RandomFaults, 'throttle' | 'serverError'>): 'throttle' | 'server-error' | undefined {
  if (faults.throttle < 0 || faults.serverError < 0 || faults.throttle + faults.serverError > 1) {
    throw new Error(`random faults: throttle ${faults.throttle} + serverError ${faults.serverError} must be probabilities summing to at most 1`);
  }
  if (draw < faults.throttle) return 'throttle';
  if (draw < faults.throttle + faults.serverError) return 'server-error';
  return undefined;
}

export type InjectedFault =
  | { kind: 'insufficient-capacity'; action: 'CreateFleet'; pools: ExhaustedPool[]; forwarded: boolean }
  | { kind: FaultKind; action: string };

export interface ProxiedRequest {
  action: string;
  /** false when the proxy answered without calling moto */
  forwarded: boolean;
  status: number | 'dropped';
  /** how long moto took to answer a forwarded request (ms) */
  upstreamMs?: number;
}

export interface Ec2FaultProxy {
  endpoint: string;
  exhaust(pools: ExhaustedPool[]): void;
  inject(rule: FaultRule): void;
  /** seeded random throttling and 500s on every later request (until `reset` or `random(undefined)`) */
  random(faults: RandomFaults | undefined): void;
  /** forget rules, pools and records */
  reset(): void;
  readonly injected: readonly InjectedFault[];
  readonly requests: readonly ProxiedRequest[];
  /** the CreateFleet bodies as moto received them (after overrides were removed) */
  readonly forwardedFleetRequests: readonly URLSearchParams[];
  count(action: string): number;
  close(): Promise<void>;
}

const OVERRIDE_KEY = /^LaunchTemplateConfigs\.(\d+)\.Overrides\.(\d+)\.(.+)$/;
const CONFIG_KEY = /^LaunchTemplateConfigs\.(\d+)\.(.+)$/;

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function errorResponse(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error></Errors><RequestID>${randomUUID()}</RequestID></Response>`;
}

const FAULT_RESPONSES: Record<Exclude<FaultKind, 'drop-response' | 'hold'>, (action: string) => { status: number; body: string }> = {
  // Real EC2 answers throttling with HTTP 503 and this code.
  throttle: () => ({ status: 503, body: errorResponse('RequestLimitExceeded', 'Request limit exceeded.') }),
  'server-error': () => ({ status: 500, body: errorResponse('InternalError', 'An internal error has occurred.') }),
  unauthorized: (action) => ({
    status: 403,
    body: errorResponse(
      'UnauthorizedOperation',
      `You are not authorized to perform this operation. User: arn:aws:iam::123456789012:user/autonode-test is not authorized to perform: ec2:${action} because no identity-based policy allows the ec2:${action} action. Encoded authorization failure message: ${randomUUID()}`,
    ),
  }),
};

interface Override {
  config: string;
  fields: Map<string, string>;
}

/** Splits CreateFleet's form body into overrides and everything else. */
export function splitOverrides(params: URLSearchParams): { rest: [string, string][]; overrides: Override[] } {
  const rest: [string, string][] = [];
  const byKey = new Map<string, Override>();
  for (const [key, value] of params) {
    const match = OVERRIDE_KEY.exec(key);
    if (!match) {
      rest.push([key, value]);
      continue;
    }
    const [, config = '', index = '', field = ''] = match;
    const id = `${config}.${index}`;
    const override = byKey.get(id) ?? { config, fields: new Map<string, string>() };
    override.fields.set(field, value);
    byKey.set(id, override);
  }
  const overrides = [...byKey.entries()]
    .sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }))
    .map(([, o]) => o);
  return { rest, overrides };
}

/** Puts `overrides` back; configs none of them belong to are dropped, the others renumbered from 1. */
export function joinOverrides(rest: [string, string][], overrides: Override[]): URLSearchParams {
  const configs = [...new Set(overrides.map((o) => o.config))].sort((a, b) => Number(a) - Number(b));
  const renumbered = new Map(configs.map((config, index) => [config, String(index + 1)]));
  const params = new URLSearchParams();
  for (const [key, value] of rest) {
    const match = CONFIG_KEY.exec(key);
    if (!match) {
      params.append(key, value);
      continue;
    }
    const [, config = '', field = ''] = match;
    const to = renumbered.get(config);
    if (to !== undefined) params.append(`LaunchTemplateConfigs.${to}.${field}`, value);
  }
  const counters = new Map<string, number>();
  for (const override of overrides) {
    const n = (counters.get(override.config) ?? 0) + 1;
    counters.set(override.config, n);
    for (const [field, value] of override.fields) params.append(`LaunchTemplateConfigs.${renumbered.get(override.config) ?? ''}.Overrides.${n}.${field}`, value);
  }
  return params;
}

export function fleetErrorItem(override: Override, pool: ExhaustedPool, templateId: string | undefined): string {
  const field = (name: string) => {
    const value = override.fields.get(name);
    return value === undefined ? '' : `<${name.charAt(0).toLowerCase()}${name.slice(1)}>${escapeXml(value)}</${name.charAt(0).toLowerCase()}${name.slice(1)}>`;
  };
  const code = pool.errorCode ?? 'InsufficientInstanceCapacity';
  const message =
    code === 'InsufficientInstanceCapacity'
      ? `We currently do not have sufficient ${pool.instanceType} capacity in the Availability Zone you requested (${pool.zone}). Our system will be working on provisioning additional capacity.`
      : `${code} for ${pool.instanceType} in ${pool.zone} (${pool.capacityType}).`;
  return (
    '<item><launchTemplateAndOverrides>' +
    (templateId ? `<launchTemplateSpecification><launchTemplateId>${escapeXml(templateId)}</launchTemplateId><version>1</version></launchTemplateSpecification>` : '') +
    `<overrides>${field('InstanceType')}${field('SubnetId')}${field('AvailabilityZone')}${field('ImageId')}${field('Priority')}</overrides>` +
    `</launchTemplateAndOverrides><lifecycle>${pool.capacityType}</lifecycle><errorCode>${escapeXml(code)}</errorCode>` +
    `<errorMessage>${escapeXml(message)}</errorMessage></item>`
  );
}

/** Adds EC2-shaped error items to moto's CreateFleetResponse (which never has any). */
export function withErrorSet(xml: string, items: string[]): string {
  if (items.length === 0) return xml;
  const cleaned = xml.replace(/<errorSet\s*\/>|<errorSet>\s*<\/errorSet>/, '');
  return cleaned.replace('</CreateFleetResponse>', `<errorSet>${items.join('')}</errorSet></CreateFleetResponse>`);
}

function fleetOnlyErrorsResponse(items: string[]): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n<CreateFleetResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">' +
    `<requestId>${randomUUID()}</requestId><fleetId>fleet-${randomUUID()}</fleetId>` +
    `<errorSet>${items.join('')}</errorSet><fleetInstanceSet/></CreateFleetResponse>`
  );
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

interface Upstream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function forward(target: URL, req: IncomingMessage, body: Buffer): Promise<Upstream> {
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, host: target.host, 'content-length': String(body.length) };
    delete headers['transfer-encoding'];
    const upstream = httpRequest(
      { hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (res) => {
        readBody(res).then((b) => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: b }), reject);
      },
    );
    upstream.on('error', reject);
    upstream.end(body);
  });
}

function send(res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string | string[] | undefined> = {}): void {
  const buffer = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined && k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
  }
  if (!('content-type' in out)) out['content-type'] = 'text/xml;charset=UTF-8';
  out['content-length'] = String(buffer.length);
  res.writeHead(status, out);
  res.end(buffer);
}

/**
 * `staticReads`: actions whose answer never changes in moto (its catalog data), answered
 * from the first successful answer to the same request — one moto render shared by every
 * later caller. For npm run scale: moto ignores MaxResults on DescribeInstanceTypes and
 * renders all 1,395 types (5.8 MB) on every call, 2 s on an idle core and a minute under
 * the run's load, where EC2 answers 100 types a page. Faults are still injected first.
 */
export async function startEc2FaultProxy(options: { target: string; staticReads?: readonly string[] }): Promise<Ec2FaultProxy> {
  const target = new URL(options.target);
  const staticReads = new Set(options.staticReads ?? []);
  const kept = new Map<string, Promise<Upstream>>();
  /** the same question: action, region (the credential scope) and parameters, not the paging or time window */
  const staticKey = (req: IncomingMessage, params: URLSearchParams, action: string): string => {
    const region = /Credential=[^/]+\/[^/]+\/([^/]+)\//.exec(String(req.headers.authorization ?? ''))?.[1] ?? '';
    const rest = [...params].filter(([k]) => !['NextToken', 'StartTime', 'EndTime'].includes(k)).sort(([a], [b]) => a.localeCompare(b));
    return JSON.stringify([action, region, rest]);
  };
  let pools: ExhaustedPool[] = [];
  let rules: { kind: FaultKind; action: string; remaining: number; beforeDrop?: FaultRule['beforeDrop']; hold?: FaultRule['hold'] }[] = [];
  const injected: InjectedFault[] = [];
  const requests: ProxiedRequest[] = [];
  const forwardedFleetRequests: URLSearchParams[] = [];
  let randomFaults: { faults: RandomFaults; draw: () => number } | undefined;

  const poolFor = (o: Override, capacityType: string): ExhaustedPool | undefined =>
    pools.find(
      (p) => p.instanceType === o.fields.get('InstanceType') && p.zone === o.fields.get('AvailabilityZone') && p.capacityType === capacityType,
    );

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const params = new URLSearchParams(raw.toString('utf8'));
    const action = params.get('Action') ?? new URL(req.url ?? '/', 'http://x').searchParams.get('Action') ?? 'Unknown';

    const rule = rules.find((r) => r.action === action && r.remaining > 0);
    if (rule?.kind === 'hold') {
      rule.remaining--;
      injected.push({ kind: rule.kind, action });
      await rule.hold?.();
    } else if (rule) {
      rule.remaining--;
      injected.push({ kind: rule.kind, action });
      if (rule.kind !== 'drop-response') {
        const { status, body } = FAULT_RESPONSES[rule.kind](action);
        requests.push({ action, forwarded: false, status });
        send(res, status, body);
        return;
      }
      // Let moto do the work, then lose the answer: the client sees a reset connection.
      await forward(target, req, raw);
      requests.push({ action, forwarded: true, status: 'dropped' });
      await rule.beforeDrop?.();
      req.socket.destroy();
      return;
    }

    if (randomFaults && (randomFaults.faults.actions === undefined || randomFaults.faults.actions.includes(action))) {
      const kind = randomFaultFor(randomFaults.draw(), randomFaults.faults);
      if (kind) {
        injected.push({ kind, action });
        const { status, body } = FAULT_RESPONSES[kind](action);
        requests.push({ action, forwarded: false, status });
        send(res, status, body);
        return;
      }
    }

    if (action === 'CreateFleet' && pools.length > 0) {
      const capacityType = params.get('TargetCapacitySpecification.DefaultTargetCapacityType') ?? 'on-demand';
      const templateOf = (o: Override) => params.get(`LaunchTemplateConfigs.${o.config}.LaunchTemplateSpecification.LaunchTemplateId`) ?? undefined;
      const { rest, overrides } = splitOverrides(params);
      const hit = overrides.map((o) => ({ o, pool: poolFor(o, capacityType) }));
      const exhausted = hit.filter((h): h is { o: Override; pool: ExhaustedPool } => h.pool !== undefined);
      if (exhausted.length > 0) {
        const items = exhausted.map((h) => fleetErrorItem(h.o, h.pool, templateOf(h.o)));
        const kept = hit.filter((h) => h.pool === undefined).map((h) => h.o);
        injected.push({ kind: 'insufficient-capacity', action: 'CreateFleet', pools: exhausted.map((h) => h.pool), forwarded: kept.length > 0 });
        if (kept.length === 0) {
          requests.push({ action, forwarded: false, status: 200 });
          send(res, 200, fleetOnlyErrorsResponse(items));
          return;
        }
        const body = joinOverrides(rest, kept);
        forwardedFleetRequests.push(body);
        const upstream = await forward(target, req, Buffer.from(body.toString(), 'utf8'));
        requests.push({ action, forwarded: true, status: upstream.status });
        const xml = upstream.status === 200 ? withErrorSet(upstream.body.toString('utf8'), items) : upstream.body;
        send(res, upstream.status, xml, upstream.headers);
        return;
      }
    }

    if (action === 'CreateFleet') forwardedFleetRequests.push(params);
    const sent = Date.now();
    if (staticReads.has(action)) {
      const key = staticKey(req, params, action);
      let answer = kept.get(key);
      if (!answer) {
        answer = forward(target, req, raw);
        kept.set(key, answer);
        // only a good answer is kept
        answer.then((u) => { if (u.status !== 200) kept.delete(key); }, () => kept.delete(key));
      }
      const upstream = await answer;
      requests.push({ action, forwarded: true, status: upstream.status, upstreamMs: Date.now() - sent });
      send(res, upstream.status, upstream.body, upstream.headers);
      return;
    }
    const upstream = await forward(target, req, raw);
    requests.push({ action, forwarded: true, status: upstream.status, upstreamMs: Date.now() - sent });
    send(res, upstream.status, upstream.body, upstream.headers);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 502, errorResponse('ProxyError', String(error)));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fault proxy: expected a TCP address');
  const { port } = address;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    exhaust: (more) => {
      pools = [...pools, ...more];
    },
    inject: (r) => {
      rules = [...rules, { kind: r.kind, action: r.action, remaining: r.times ?? 1, ...(r.beforeDrop ? { beforeDrop: r.beforeDrop } : {}), ...(r.hold ? { hold: r.hold } : {}) }];
    },
    random: (faults) => {
      if (faults) randomFaultFor(0, faults);
      randomFaults = faults ? { faults, draw: mulberry32(faults.seed) } : undefined;
    },
    reset: () => {
      pools = [];
      rules = [];
      randomFaults = undefined;
      injected.length = 0;
      requests.length = 0;
      forwardedFleetRequests.length = 0;
    },
    injected,
    requests,
    forwardedFleetRequests,
    count: (action) => requests.filter((r) => r.action === action).length,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

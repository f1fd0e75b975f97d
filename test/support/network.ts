import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { loadStackInfo } from './stack';

/** 10.<octet>.0.0/16 for test networks; the dev environment, the scale run and the provisioner bench use 40–59, 100, 101 and 110. */
const FIRST = 120;
const LAST = 250;

/**
 * A VPC octet no other network of this stack run has. Test files share one moto and one
 * guest cluster, and a VPC's addresses make its node names (ip-10-<octet>-0-4.ec2.internal):
 * a file that drew another's octet at random got that file's node names, and its kubelets
 * adopted the Nodes the other file had left, so no Node carried its instances' providerIDs
 * and registration never happened (seen in CI: enablement-crash.test.ts). Each octet is
 * claimed by creating a marker file in the stack's directory (O_EXCL: one winner).
 */
export function uniqueNetworkOctet(): number {
  const dir = join(loadStackInfo().dir, 'network-octets');
  mkdirSync(dir, { recursive: true });
  for (let octet = FIRST; octet <= LAST; octet++) {
    try {
      closeSync(openSync(join(dir, String(octet)), 'wx'));
      return octet;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error(`every test network octet from ${FIRST} to ${LAST} is taken in ${dir}: too many networks for one stack run`);
}

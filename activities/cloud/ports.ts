/**
 * The small ports the EC2 implementation is built over, so tests pass real clients against
 * moto, or fakes, and production passes per-cluster clients.
 */
import { type EC2Client } from '@aws-sdk/client-ec2';

/** Only `send`: the implementation uses commands, never the aggregated client. */
export type Ec2Api = Pick<EC2Client, 'send'>;

export interface Clock {
  now(): Date;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The subset of pino's API we use; a pino Logger satisfies it. */
export interface CloudLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export const silentLogger: CloudLogger = { debug: () => {}, info: () => {}, warn: () => {} };

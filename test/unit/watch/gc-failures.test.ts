// The watch workflow's memory of failed GC rounds (workflows/gc-failures.ts): what the
// `status` query shows, and when a run of failures still needs its Warning Event.
import { gcRoundFailed, gcRoundSucceeded, type GcFailure } from '../../../workflows/gc-failures';

const failing = (consecutiveFailures: number, warningEventRecorded: boolean): GcFailure => ({
  message: 'earlier error',
  at: '2026-11-24T10:00:00.000Z',
  consecutiveFailures,
  warningEventRecorded,
});
const round = { message: 'UnauthorizedOperation: ec2:DescribeInstances', at: '2026-11-24T10:02:00.000Z' };

describe('a failed GC round', () => {
  it.each<[string, GcFailure | undefined, number, boolean]>([
    ['the first ever: 1 in a row, Event to write', undefined, 1, false],
    ['the first after GC worked again: 1 in a row, a new Event to write', failing(0, true), 1, false],
    ['the second of a run whose Event is written: 2 in a row, no new Event', failing(1, true), 2, true],
    ['the third of a run whose Event could not be written yet: 3 in a row, Event to write', failing(2, false), 3, false],
  ])('%s', (_case, previous, consecutiveFailures, warningEventRecorded) => {
    expect(gcRoundFailed(previous, round)).toEqual({ ...round, consecutiveFailures, warningEventRecorded });
  });
});

describe('a successful GC round', () => {
  it('ends the run of failures and keeps the last error and its time visible', () => {
    expect(gcRoundSucceeded(failing(3, true))).toEqual({ ...failing(3, true), consecutiveFailures: 0 });
  });

  it('leaves a workflow that never failed without an error', () => {
    expect(gcRoundSucceeded(undefined)).toBeUndefined();
  });
});

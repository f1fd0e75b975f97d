import { createEventSink } from '../../../activities/kube/event-sink';
import { type EventInput } from '../../../activities/kube/events';

const anEvent = (name: string): EventInput => ({ involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name }, type: 'Normal', reason: 'Nominated', message: `Pod should schedule on: nodeclaim/${name}` });

describe('background event sink', () => {
  it('writes every queued Event without the caller waiting, at most `concurrency` at once', async () => {
    let active = 0;
    let peak = 0;
    const written: string[] = [];
    const sink = createEventSink(async (e) => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setTimeout(r, 2));
      written.push(e.involvedObject.name);
      active--;
    }, { concurrency: 4 });
    for (let i = 0; i < 40; i++) sink.emit(anEvent(`p${i}`));
    expect(written).toHaveLength(0); // emit returned before anything was written
    await sink.drained();
    expect(written).toHaveLength(40);
    expect(peak).toBe(4);
  });

  it('drops what does not fit in the queue, and counts it', async () => {
    const drops: number[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const sink = createEventSink(() => gate, { concurrency: 1, maxQueued: 3, onDrop: (n) => drops.push(n) });
    for (let i = 0; i < 5; i++) sink.emit(anEvent(`p${i}`));
    expect(drops).toEqual([1, 2]);
    release();
    await sink.drained();
  });

  it('reports a failed write and keeps going', async () => {
    const errors: unknown[] = [];
    const written: string[] = [];
    const sink = createEventSink(async (e) => {
      if (e.involvedObject.name === 'bad') throw new Error('403');
      written.push(e.involvedObject.name);
    }, { onError: (err) => errors.push(err) });
    sink.emit(anEvent('bad'));
    sink.emit(anEvent('good'));
    await sink.drained();
    expect(written).toEqual(['good']);
    expect(errors).toHaveLength(1);
  });
});

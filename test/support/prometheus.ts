/**
 * Prometheus' text exposition format, read back as a scraper reads it: the tests check what
 * was served, not the registry's objects. Enough of the format for prom-client's and the
 * Temporal SDK's output: `# HELP`/`# TYPE` lines, samples with quoted, escaped labels.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** metric family name → counter, gauge, histogram, … */
  types: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type?.[1] && type[2]) {
      types.set(type[1], type[2]);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match?.[1] || match[4] === undefined) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = match[3] ?? '';
    LABEL.lastIndex = 0;
    let consumed = 0;
    for (let label = LABEL.exec(body); label; label = LABEL.exec(body)) {
      labels[label[1] ?? ''] = (label[2] ?? '').replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      consumed = LABEL.lastIndex;
    }
    if (consumed !== body.length) throw new Error(`unreadable labels in: ${line}`);
    samples.push({ name: match[1], labels, value: Number(match[4]) });
  }
  return { samples, types };
}

/** The samples of one name whose labels include `labels`. */
export function samplesOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/** The one sample of `name` with exactly these labels (an error when there are several: say more labels). */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string>): number | undefined {
  const found = exposition.samples.filter((s) => s.name === name && Object.keys(s.labels).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** Sums the samples of `name` that match `labels`, grouped by one label (`sum by (label)` in PromQL). */
export function sumBy(exposition: Exposition, name: string, label: string, labels: Record<string, string> = {}): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const s of samplesOf(exposition, name, labels)) sums[s.labels[label] ?? ''] = (sums[s.labels[label] ?? ''] ?? 0) + s.value;
  return sums;
}

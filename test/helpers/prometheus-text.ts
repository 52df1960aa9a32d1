/**
 * An independent reader of the Prometheus text exposition format (version 0.0.4), for tests: it shares no code
 * with prom-client, so a scrape that a real Prometheus would reject fails here too. Every sample line must follow
 * a TYPE line for its family, label values are unescaped, and a malformed line throws.
 */
export type Sample = { name: string; labels: Record<string, string>; value: number };
export type Scrape = { types: Map<string, string>; samples: Sample[] };

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const SUFFIXES = ["_bucket", "_sum", "_count", "_total", "_created"];

export function parsePrometheusText(text: string): Scrape {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const [index, line] of text.split("\n").entries()) {
    const where = `line ${index + 1}: ${line}`;
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
      if (!m && /^# (HELP|TYPE)/.test(line)) throw new Error(`bad comment, ${where}`);
      if (m?.[1] === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(m[3]!))
          throw new Error(`bad type, ${where}`);
        types.set(m[2]!, m[3]!);
      }
      continue;
    }
    const name = NAME.exec(line)?.[0];
    if (!name) throw new Error(`no metric name, ${where}`);
    let rest = line.slice(name.length);
    const labels: Record<string, string> = {};
    if (rest.startsWith("{")) {
      rest = rest.slice(1);
      while (!rest.startsWith("}")) {
        const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/.exec(rest);
        if (!m) throw new Error(`bad label, ${where}`);
        labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
        rest = rest.slice(m[0].length);
      }
      rest = rest.slice(1);
    }
    const value = /^ (\S+)( -?\d+)?$/.exec(rest)?.[1];
    if (value === undefined) throw new Error(`bad value, ${where}`);
    const number = value === "+Inf" ? Infinity : value === "-Inf" ? -Infinity : value === "NaN" ? NaN : Number(value);
    if (Number.isNaN(number) && value !== "NaN") throw new Error(`bad number, ${where}`);
    const family = types.has(name)
      ? name
      : SUFFIXES.map((s) => (name.endsWith(s) ? name.slice(0, -s.length) : "")).find((f) => f && types.has(f));
    if (!family) throw new Error(`sample before its TYPE line, ${where}`);
    samples.push({ name, labels, value: number });
  }
  return { types, samples };
}

/** The value of the one sample with this name and (at least) these labels; undefined when there is none. */
export function sampleValue(scrape: Scrape, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = scrape.samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/**
 * What netkeep would store of a configuration text under a template, and why each masked value is masked: the
 * same steps as storedText (drop filters, the template's secret rules one by one, then the generic layer), each
 * replacement located in the result and named by the rule that made it. For a user writing or copying a
 * template, to check it on a text before a device does (POST /templates/{id}/render, svc template:render).
 */
import { applySpans, findGenericSecrets, SECRET_MARKER } from "./secret-grammar.ts";
import type { ConnectionTemplate } from "./template-schema.ts";
import { removeLines, removeSecrets } from "./template-text.ts";

export type RenderedMask = {
  /** 1-based line and column of the replacement in the rendered text; its length in characters. */
  line: number;
  column: number;
  length: number;
  /** What stands there now (the marker, with whatever the rule's replacement put around it). */
  text: string;
  layer: "template" | "generic";
  /** `secrets[2]` for a template rule (its index), else the generic layer's rule (keyword or `shape:...`). */
  rule: string;
  /** The template rule's pattern. */
  pattern?: string;
};

export type Rendered = { text: string; lines_dropped: number; masks: RenderedMask[] };

/** A replacement in absolute offsets of the text as it stands after the step that made it. */
type Span = { start: number; end: number; layer: RenderedMask["layer"]; rule: string; pattern?: string };

/** A changed region: [oldStart, oldEnd) of the text before a step became [newStart, newEnd) after it. */
type Edit = { oldStart: number; oldEnd: number; newStart: number; newEnd: number };

/** Where `after` differs from `before`: line by line when both have as many lines, else as one region. */
function edits(before: string, after: string): Edit[] {
  const out: Edit[] = [];
  const region = (x: string, y: string, offsetX: number, offsetY: number) => {
    let p = 0;
    while (p < x.length && p < y.length && x[p] === y[p]) p++;
    let s = 0;
    while (s < x.length - p && s < y.length - p && x[x.length - 1 - s] === y[y.length - 1 - s]) s++;
    out.push({
      oldStart: offsetX + p,
      oldEnd: offsetX + x.length - s,
      newStart: offsetY + p,
      newEnd: offsetY + y.length - s,
    });
  };
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length !== b.length) {
    region(before, after, 0, 0);
    return out;
  }
  let offA = 0;
  let offB = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) region(a[i]!, b[i]!, offA, offB);
    offA += a[i]!.length + 1;
    offB += b[i]!.length + 1;
  }
  return out;
}

/** Spans of the text before a step, where they stand after it; one the step rewrote gives way to the step's own. */
function shift(spans: Span[], changes: Edit[]): Span[] {
  return spans.flatMap((span) => {
    let delta = 0;
    for (const c of changes) {
      if (c.oldEnd <= span.start) delta += c.newEnd - c.newStart - (c.oldEnd - c.oldStart);
      else if (c.oldStart < span.end) return [];
    }
    return [{ ...span, start: span.start + delta, end: span.end + delta }];
  });
}

export function renderStored(output: string, template: Pick<ConnectionTemplate, "filters" | "secrets">): Rendered {
  const kept = removeLines(output, template.filters.drop);
  const linesDropped = output.split("\n").length - kept.split("\n").length;
  let text = kept;
  let spans: Span[] = [];
  template.secrets.forEach((rule, index) => {
    const next = removeSecrets(text, [rule]);
    if (next === text) return;
    const changes = edits(text, next);
    spans = shift(spans, changes);
    for (const c of changes)
      spans.push({
        start: c.newStart,
        end: c.newEnd,
        layer: "template",
        rule: `secrets[${index}]`,
        pattern: rule.pattern,
      });
    text = next;
  });
  const generic = findGenericSecrets(text);
  const rendered = applySpans(text, generic);
  let delta = 0;
  const genericEdits: Edit[] = generic.map((g) => {
    const edit = {
      oldStart: g.start,
      oldEnd: g.end,
      newStart: g.start + delta,
      newEnd: g.start + delta + SECRET_MARKER.length,
    };
    delta += SECRET_MARKER.length - (g.end - g.start);
    return edit;
  });
  const all: Span[] = [
    ...shift(spans, genericEdits),
    ...genericEdits.map((e, i) => ({
      start: e.newStart,
      end: e.newEnd,
      layer: "generic" as const,
      rule: generic[i]!.rule,
    })),
  ].sort((x, y) => x.start - y.start);
  const lineStarts = [0];
  for (let i = rendered.indexOf("\n"); i !== -1; i = rendered.indexOf("\n", i + 1)) lineStarts.push(i + 1);
  let line = 0;
  const masks = all.map((s) => {
    while (line + 1 < lineStarts.length && lineStarts[line + 1]! <= s.start) line++;
    return {
      line: line + 1,
      column: s.start - lineStarts[line]! + 1,
      length: s.end - s.start,
      text: rendered.slice(s.start, s.end),
      layer: s.layer,
      rule: s.rule,
      ...(s.pattern ? { pattern: s.pattern } : {}),
    };
  });
  return { text: rendered, lines_dropped: linesDropped, masks };
}

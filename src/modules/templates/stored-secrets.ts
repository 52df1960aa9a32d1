/**
 * What storedText stores of an output, with the values both masking layers took out of it, in order: the
 * collector digests them (secretsDigest) so a version can say its secrets changed without storing them.
 */
import { applySpans, findGenericSecrets } from "./secret-grammar.ts";
import type { ConnectionTemplate } from "./template-schema.ts";
import { removeLines, removeSecrets } from "./template-text.ts";

/** The regions of `before` a template's rules rewrote: line by line when the line count held, else one region. */
function rewritten(before: string, after: string): string[] {
  if (before === after) return [];
  const region = (x: string, y: string) => {
    let p = 0;
    while (p < x.length && p < y.length && x[p] === y[p]) p++;
    let s = 0;
    while (s < x.length - p && s < y.length - p && x[x.length - 1 - s] === y[y.length - 1 - s]) s++;
    return x.slice(p, x.length - s);
  };
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length !== b.length) return [region(before, after)];
  return a.flatMap((line, i) => (line === b[i] ? [] : [region(line, b[i]!)]));
}

/** storedText, and the values it masked (template rules' rewritten regions, then the generic layer's values). */
export function storedTextAndSecrets(
  output: string,
  template: Pick<ConnectionTemplate, "filters" | "secrets">,
): { text: string; secrets: string[] } {
  const kept = removeLines(output, template.filters.drop);
  const ruled = removeSecrets(kept, template.secrets);
  const spans = findGenericSecrets(ruled);
  return {
    text: applySpans(ruled, spans),
    secrets: [...rewritten(kept, ruled), ...spans.map((s) => ruled.slice(s.start, s.end))],
  };
}

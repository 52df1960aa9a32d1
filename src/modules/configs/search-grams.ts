/**
 * The tokens of the configuration search index: every 6-character window of every line (ASCII letters folded to
 * lower case, the line's end padded with "\n"), each written as one FTS5 token. FTS5's own trigram tokenizer was
 * measured first: configurations are full of addresses, whose 3-character pieces ("2.2", ".35") occur in nearly
 * every configuration, so address lookups left about 70% of configurations as candidates. Looking up
 * "host 172.30.235." in 500 generated configurations (26 contain it) leaves 221 candidates with 4-character
 * windows, 39 with 5 and exactly the 26 with 6, for an index of 3.8, 5.0 and 6.4 KB per configuration.
 *
 * A literal of 6 or more characters must contain each of its windows; a shorter one (3 to 5 characters) is the
 * start of some window of the line it is in (the padding makes them at the end of a line): a prefix lookup.
 */
import { MIN_LITERAL } from "./search-literals.ts";

export const GRAM = 6;
const LINE_END = "\n".repeat(GRAM - MIN_LITERAL);

/**
 * Each UTF-16 unit as one non-ASCII character (ASCII shifted up by 0x100, lone surrogates as U+FFFD), which the
 * FTS5 `ascii` tokenizer keeps together as token characters. Other characters stand for themselves: one that
 * happens to equal a shifted ASCII character only adds candidates, never hides one.
 */
function encode(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    out += String.fromCharCode(c < 0x80 ? c + 0x100 : c >= 0xd800 && c <= 0xdfff ? 0xfffd : c);
  }
  return out;
}

/** The distinct tokens of some lines, space-separated: the body of one index document. */
export function gramDocument(lines: Iterable<string>): string {
  const grams = new Set<string>();
  for (const line of lines) {
    const coded = encode(line + LINE_END);
    for (let i = 0; i + GRAM <= coded.length; i++) grams.add(coded.slice(i, i + GRAM));
  }
  return [...grams].join(" ");
}

const quote = (token: string) => `"${token}"`;

/**
 * What a document must hold to hold `literal`: FTS5 tokens (its windows) and token prefixes (for pieces shorter
 * than a window); none when it is too short. For case-insensitive searches only ASCII letters are folded here,
 * as JavaScript's `i` flag folds no other character onto them; a literal holding other letters is cut at them
 * (each run of 3 or more still counts).
 */
export function literalLookups(literal: string, caseSensitive: boolean): { windows: string[]; prefixes: string[] } {
  const runs = caseSensitive ? [literal] : literal.split(/[^\x00-\x7f]+/);
  const out = { windows: [] as string[], prefixes: [] as string[] };
  for (const run of runs) {
    if (run.length < MIN_LITERAL) continue;
    const coded = encode(run);
    if (coded.length < GRAM) {
      out.prefixes.push(`${quote(coded)} *`);
      continue;
    }
    const windows = Array.from({ length: coded.length - GRAM + 1 }, (_, i) => coded.slice(i, i + GRAM));
    // A long literal is pinned down by a score of its windows, spread over it.
    const step = Math.max(1, Math.floor(windows.length / 20));
    out.windows.push(...new Set(windows.filter((_, i) => i % step === 0 || i === windows.length - 1).map(quote)));
  }
  return out;
}

/**
 * The FTS5 expression for "holds every one of these literals", or null when they give it nothing to look up.
 * Prefix lookups are left out when there are whole windows to look up: a prefix merges the lists of every token
 * it starts (thousands, for a short piece such as " eq "), which costs more than the few candidates it could
 * remove. Leaving a lookup out only lets more candidates through, never fewer.
 */
export function branchQuery(literals: readonly string[], caseSensitive: boolean): string | null {
  const lookups = literals.map((literal) => literalLookups(literal, caseSensitive));
  const windows = lookups.flatMap((l) => l.windows);
  const parts = windows.length ? windows : lookups.flatMap((l) => l.prefixes);
  return parts.length ? [...new Set(parts)].join(" AND ") : null;
}

/**
 * The regexes policies are mostly written with (`^hostname [a-z0-9-]+$`, `^ switchport access vlan [0-9]+$`,
 * `^snmp-server community [^ ]+ RO`) tested in place on a line of the text, without making the line a string.
 * RE2 answers them too (and still checks every pattern when it is saved), but a fleet's lines are tested by the
 * hundred thousand, and for each one RE2 needed the line as a string and about a microsecond; remembering its
 * answers helps only where lines repeat, and a device's own lines (hostname, secrets, communities) never do.
 *
 * Only a sequence of single characters is taken: literal characters, `\` before punctuation, `.`, `\d`, `\w`,
 * `\s`, and bracket classes of plain characters and ranges (negated or not), each at most once followed by
 * `*`, `+` or `?`; `^` first and `$` last. No groups, alternation, counted repetition or case folding: those
 * patterns go to RE2. It is an automaton over the pattern's positions kept as the bits of one integer (a
 * Thompson simulation), so a line costs one step per character whatever the pattern, as in RE2.
 *
 * ASCII only: a line with any other character is handed back to RE2 (`.` and `[^ ]` mean one code point there,
 * and a string holds some as two units), so answers never differ.
 */

/** At most this many characters in the sequence: positions are bits of a 32-bit integer, with one for "matched". */
const MAX_ATOMS = 30;
const ASCII = 128;

/** One character of the sequence: the characters it takes, its quantifier, and the character when it is one literal. */
type Atom = { members: Uint8Array; quantifier: "" | "*" | "+" | "?"; literal: string | null };

/** The pattern as a test of text[from, to), or null when it is not one this takes (RE2 then tests it). */
export function simpleRegexTest(source: string, fallback: (line: string) => boolean): ((text: string, from: number, to: number) => boolean) | null {
  const parsed = parse(source);
  if (!parsed) return null;
  const { atoms, start, end } = parsed;
  const k = atoms.length;
  // matches[c]: the positions whose character class holds c; optional: positions that may match nothing;
  // repeat: positions that may match again.
  const matches = new Int32Array(ASCII);
  let optional = 0;
  let repeat = 0;
  atoms.forEach((atom, i) => {
    for (let c = 0; c < ASCII; c++) matches[c]! |= atom.members[c]! << i;
    if (atom.quantifier === "*" || atom.quantifier === "?") optional |= 1 << i;
    if (atom.quantifier === "*" || atom.quantifier === "+") repeat |= 1 << i;
  });
  const matched = 1 << k;
  const closure = (set: number) => {
    if (optional === 0) return set;
    for (;;) {
      const more = set | ((set & optional) << 1);
      if (more === set) return set;
      set = more;
    }
  };
  const initial = closure(1);
  // Anchored at the start, the literal characters it starts with are compared in place, natively: a policy's
  // regex is mostly its literal (`^ switchport access vlan ` before `[0-9]+$`).
  let fixed = 0;
  while (start && fixed < k && atoms[fixed]!.literal !== null && atoms[fixed]!.quantifier === "") fixed++;
  const prefix = atoms.slice(0, fixed).map((a) => a.literal).join("");
  const afterPrefix = closure(1 << fixed);
  return (text, from, to) => {
    let set = initial;
    let i = from;
    if (fixed > 0) {
      if (to - from < fixed || !text.startsWith(prefix, from)) return false;
      set = afterPrefix;
      i += fixed;
    }
    for (; i < to; i++) {
      if (!end && set & matched) return true;
      const c = text.charCodeAt(i);
      if (c >= ASCII) return fallback(text.slice(from, to));
      const stepped = set & matches[c]!;
      set = closure((stepped << 1) | (stepped & repeat));
      if (!start) set |= initial;
      else if (set === 0) return false;
    }
    return (set & matched) !== 0;
  };
}

function parse(source: string): { atoms: Atom[]; start: boolean; end: boolean } | null {
  let i = 0;
  let last = source.length;
  const start = source.startsWith("^");
  if (start) i++;
  const end = last > i && source.endsWith("$") && !escapedAt(source, last - 1);
  if (end) last--;
  const atoms: Atom[] = [];
  while (i < last) {
    const c = source[i]!;
    let members: Uint8Array | null;
    let literal: string | null = null;
    if (c === "[") {
      const close = source.indexOf("]", i + 1);
      if (close < 0 || close >= last) return null;
      members = bracket(source.slice(i + 1, close));
      i = close + 1;
    } else if (c === "\\") {
      members = escape(source[i + 1]);
      if (/^[!-/:-@[-`{-~]$/.test(source[i + 1] ?? "")) literal = source[i + 1]!;
      i += 2;
    } else if (c === ".") {
      members = set((ch) => ch !== 10);
      i++;
    } else if ("^$|?*+()]{}".includes(c) || c.charCodeAt(0) >= ASCII) {
      return null;
    } else {
      members = one(c.charCodeAt(0));
      literal = c;
      i++;
    }
    if (!members || i > last) return null;
    let quantifier: Atom["quantifier"] = "";
    if (i < last && "*+?".includes(source[i]!)) quantifier = source[i++] as Atom["quantifier"];
    if (i < last && "*+?{".includes(source[i]!)) return null; // lazy, possessive or stacked: not this sequence
    atoms.push({ members, quantifier, literal });
    if (atoms.length > MAX_ATOMS) return null;
  }
  return atoms.length > 0 ? { atoms, start, end } : null;
}

function set(has: (c: number) => boolean): Uint8Array {
  const members = new Uint8Array(ASCII);
  for (let c = 0; c < ASCII; c++) if (has(c)) members[c] = 1;
  return members;
}
const one = (c: number) => {
  const members = new Uint8Array(ASCII);
  members[c] = 1;
  return members;
};
const inRange = (c: number, from: string, to: string) => c >= from.charCodeAt(0) && c <= to.charCodeAt(0);

/** `\x`: punctuation stands for itself; \d \w \s as RE2 defines them; anything else is not taken. */
function escape(next: string | undefined): Uint8Array | null {
  if (next === undefined) return null;
  if (next === "d") return set((c) => inRange(c, "0", "9"));
  if (next === "w") return set((c) => inRange(c, "0", "9") || inRange(c, "a", "z") || inRange(c, "A", "Z") || c === 95);
  if (next === "s") return set((c) => c === 9 || c === 10 || c === 12 || c === 13 || c === 32);
  if (/^[!-/:-@[-`{-~]$/.test(next)) return one(next.charCodeAt(0));
  return null;
}

/** A bracket class's inside: plain characters and ranges, `^` first to negate, `-` first or last as itself. */
function bracket(inside: string): Uint8Array | null {
  const negated = inside.startsWith("^");
  const body = negated ? inside.slice(1) : inside;
  if (body === "" || /[\\[\]]/.test(body) || /[^\x20-\x7e]/.test(body)) return null;
  const members = new Uint8Array(ASCII);
  for (let j = 0; j < body.length; j++) {
    const from = body[j]!;
    if (body[j + 1] === "-" && j + 2 < body.length) {
      const to = body[j + 2]!;
      if (to < from || (body[j + 3] === "-" && j + 4 < body.length)) return null; // a range next to a range: left to RE2
      for (let c = from.charCodeAt(0); c <= to.charCodeAt(0); c++) members[c] = 1;
      j += 2;
    } else members[from.charCodeAt(0)] = 1;
  }
  if (negated) for (let c = 0; c < ASCII; c++) members[c] = members[c] ? 0 : 1;
  return members;
}

/** Whether the character at `at` is escaped (an odd run of backslashes before it). */
function escapedAt(source: string, at: number): boolean {
  let n = 0;
  while (at - 1 - n >= 0 && source[at - 1 - n] === "\\") n++;
  return n % 2 === 1;
}

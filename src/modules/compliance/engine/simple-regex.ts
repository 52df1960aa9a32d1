/**
 * The regexes policies are mostly written with (`^hostname [a-z0-9-]+$`, `^ switchport access vlan [0-9]+$`,
 * `^enable secret (5|8|9) `) tested in place on a line of the text, without making the line a string. RE2
 * answers them too (and still checks every pattern when it is saved), but a fleet's lines are tested by the
 * hundred thousand, and for each one RE2 needed the line as a string and about a microsecond (far more on a
 * new policy's first lines); remembering its answers helps only where lines repeat, and a device's own lines
 * (hostname, secrets, communities) never do.
 *
 * Taken: literal characters, `\` before punctuation, `.`, `\d`, `\w`, `\s`, bracket classes of plain characters
 * and ranges (negated or not), groups `(...)` and `(?:...)` with alternatives `|`, each followed by at most one
 * `*`, `+` or `?`; `^` first and `$` last (not with alternatives at the top, where they would bind to one). At
 * most 32 characters. No counted repetition, flags, case folding or word boundaries: those patterns go to RE2.
 * The pattern becomes a position automaton (Glushkov's: one state per character of the pattern, so no epsilon
 * moves) whose set of live states is the bits of one integer, so a line costs one step per character whatever
 * the pattern, linear as in RE2.
 *
 * ASCII only: a line with any other character is handed back to RE2 (`.` and `[^ ]` mean one code point there,
 * and a string holds some as two units), so answers never differ.
 */

/** At most this many pattern characters: states are the bits of a 32-bit integer (the last one its sign). */
const MAX_POSITIONS = 32;
const ASCII = 128;

type Quantifier = "" | "*" | "+" | "?";
/** A parsed pattern: one character (a position), a sequence, or alternatives; each maybe repeated. */
type Node =
  | { kind: "char"; position: number; members: Uint8Array; literal: string | null; quantifier: Quantifier }
  | { kind: "seq"; items: Node[]; quantifier: Quantifier }
  | { kind: "alt"; branches: Node[]; quantifier: Quantifier };

/** What Glushkov's construction needs of a node: whether it matches nothing, its first and last positions. */
type Sets = { nullable: boolean; first: number; last: number };

/** The pattern as a test of text[from, to), or null when it is not one this takes (RE2 then tests it). */
export function simpleRegexTest(
  source: string,
  fallback: (line: string) => boolean,
): ((text: string, from: number, to: number) => boolean) | null {
  const parsed = parse(source);
  if (!parsed) return null;
  const { root, positions, start, end } = parsed;
  // matches[c]: the positions whose character class holds c; follow[p]: the positions that may come after p.
  const matches = new Int32Array(ASCII);
  const follow = new Int32Array(positions.length);
  positions.forEach((node, p) => {
    if (node.literal !== null) matches[node.literal.charCodeAt(0)]! |= 1 << p;
    else for (let c = 0; c < ASCII; c++) matches[c]! |= node.members[c]! << p;
  });
  const { nullable, first, last } = glushkov(root, follow);
  // Anchored at the start, the literal characters it starts with are compared in place, natively: a policy's
  // regex is mostly its literal (`^ switchport access vlan ` before `[0-9]+$`).
  const leading = start ? literalPrefix(root) : [];
  const prefix = leading.map((n) => n.literal).join("");
  const afterPrefix = leading.length > 0 ? 1 << leading[leading.length - 1]!.position : 0;
  return (text, from, to) => {
    if (nullable && (!end || !start || from === to)) return true; // it matches the empty string, and may here
    let live = 0; // positions just matched, on a match that began where the pattern may begin
    let i = from;
    if (prefix) {
      if (to - from < prefix.length || !text.startsWith(prefix, from)) return false;
      live = afterPrefix;
      i += prefix.length;
    }
    for (; i < to; i++) {
      if (!end && live & last) return true;
      const c = text.charCodeAt(i);
      if (c >= ASCII) return fallback(text.slice(from, to));
      let next = start && i !== from ? 0 : first;
      for (let rest = live; rest !== 0; rest &= rest - 1) next |= follow[31 - Math.clz32(rest & -rest)]!;
      live = next & matches[c]!;
      if (start && live === 0) return false;
    }
    return (live & last) !== 0;
  };
}

/** Nullable, first and last positions of `node`, filling follow[] on the way (Glushkov's construction). */
function glushkov(node: Node, follow: Int32Array): Sets {
  let sets: Sets;
  if (node.kind === "char") sets = { nullable: false, first: 1 << node.position, last: 1 << node.position };
  else if (node.kind === "alt") {
    sets = { nullable: false, first: 0, last: 0 };
    for (const branch of node.branches) {
      const b = glushkov(branch, follow);
      sets = { nullable: sets.nullable || b.nullable, first: sets.first | b.first, last: sets.last | b.last };
    }
  } else {
    sets = { nullable: true, first: 0, last: 0 };
    for (const item of node.items) {
      const b = glushkov(item, follow);
      for (let rest = sets.last; rest !== 0; rest &= rest - 1) follow[31 - Math.clz32(rest & -rest)]! |= b.first;
      sets = {
        nullable: sets.nullable && b.nullable,
        first: sets.nullable ? sets.first | b.first : sets.first,
        last: b.nullable ? sets.last | b.last : b.last,
      };
    }
  }
  if (node.quantifier === "*" || node.quantifier === "+") {
    for (let rest = sets.last; rest !== 0; rest &= rest - 1) follow[31 - Math.clz32(rest & -rest)]! |= sets.first;
  }
  if (node.quantifier === "*" || node.quantifier === "?") sets = { ...sets, nullable: true };
  return sets;
}

/** The single literal characters a pattern must start with, in order (none when it starts otherwise). */
function literalPrefix(root: Node): Extract<Node, { kind: "char" }>[] {
  const out: Extract<Node, { kind: "char" }>[] = [];
  let node: Node = root;
  while (node.kind === "alt" && node.branches.length === 1 && node.quantifier === "") node = node.branches[0]!;
  if (node.kind !== "seq" || node.quantifier !== "") return out;
  for (const item of node.items) {
    if (item.kind !== "char" || item.literal === null || item.quantifier !== "") break;
    out.push(item);
  }
  return out;
}

function parse(
  source: string,
): { root: Node; positions: Extract<Node, { kind: "char" }>[]; start: boolean; end: boolean } | null {
  let last = source.length;
  const start = source.startsWith("^");
  const end = last > (start ? 1 : 0) && source.endsWith("$") && !escapedAt(source, last - 1);
  if (end) last--;
  const positions: Extract<Node, { kind: "char" }>[] = [];
  let i = start ? 1 : 0;

  const alternatives = (): Node | null => {
    const branches: Node[] = [];
    for (;;) {
      const items: Node[] = [];
      while (i < last && source[i] !== "|" && source[i] !== ")") {
        const item = quantified();
        if (!item) return null;
        items.push(item);
      }
      branches.push({ kind: "seq", items, quantifier: "" });
      if (i < last && source[i] === "|") i++;
      else return { kind: "alt", branches, quantifier: "" };
    }
  };
  const quantified = (): Node | null => {
    const node = atom();
    if (!node) return null;
    if (i < last && "*+?".includes(source[i]!)) node.quantifier = source[i++] as Quantifier;
    if (i < last && "*+?{".includes(source[i]!)) return null; // lazy, possessive, stacked or counted: RE2's
    return node;
  };
  const atom = (): Node | null => {
    const c = source[i]!;
    if (c === "(") {
      i += source.startsWith("(?:", i) ? 3 : 1;
      if (source[i - 1] === "?" || source[i] === "?") return null; // flags, names, lookaround
      const inner = alternatives();
      if (!inner || source[i] !== ")" || i >= last) return null;
      i++;
      return inner;
    }
    let members: Uint8Array | null;
    let literal: string | null = null;
    if (c === "[") {
      const close = source.indexOf("]", i + 1);
      if (close < 0 || close >= last) return null;
      members = bracket(source.slice(i + 1, close));
      i = close + 1;
    } else if (c === "\\") {
      const next = source[i + 1];
      members = escape(next);
      if (next !== undefined && PUNCTUATION.test(next)) literal = next;
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
    if (!members || i > last || positions.length >= MAX_POSITIONS) return null;
    const node = { kind: "char" as const, position: positions.length, members, literal, quantifier: "" as Quantifier };
    positions.push(node);
    return node;
  };

  const root = alternatives();
  if (!root || i !== last || positions.length === 0) return null;
  if ((start || end) && root.kind === "alt" && root.branches.length > 1) return null;
  return { root, positions, start, end };
}

const PUNCTUATION = /^[!-/:-@[-`{-~]$/;

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
  if (PUNCTUATION.test(next)) return one(next.charCodeAt(0));
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

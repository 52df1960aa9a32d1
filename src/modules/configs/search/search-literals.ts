/**
 * What text a regular expression's matches must contain, so the search index can narrow a search before the
 * expression runs: alternatives (any one may hold), each a set of literal strings that must all appear. Only
 * literals of at least MIN_LITERAL characters count, the shortest string an index lookup can use. The answer
 * may demand less than the expression does (a weaker filter only costs extra candidates) but never more.
 * `null`: some alternative demands nothing the index can look up, so the search has to scan.
 */
export const MIN_LITERAL = 3;

/** Alternatives of conjunctions: [[a, b], [c]] means (a and b) or c; [[]] demands nothing. */
type Need = string[][];

const NOTHING: Need = [[]];
/** Past this many alternatives a conjunction keeps its smaller side: weaker, never wrong. */
const MAX_ALTERNATIVES = 16;

function and(a: Need, b: Need): Need {
  if (a.length * b.length > MAX_ALTERNATIVES) return a.length <= b.length ? a : b;
  return a.flatMap((x) => b.map((y) => [...x, ...y]));
}

const CLASS_ESCAPES = new Set(["d", "D", "w", "W", "s", "S", "b", "B"]);
const CONTROL_ESCAPES: Record<string, string> = { t: "\t", n: "\n", r: "\r", f: "\f", v: "\v" };

/**
 * Reads a pattern in JavaScript's non-unicode syntax plus what RE2, which runs search patterns, adds to it
 * (src/kernel/patterns): `(?P<name>`, `\pL`, `\x{...}`, `[[:alpha:]]`, `\A` and `\z`. Inline flags such as `(?i)` and
 * `\Q...\E` quoting change what literal text means, so a pattern with them is `unsure`: the index is not asked.
 */
class Reader {
  pos = 0;
  unsure = false;
  constructor(readonly src: string) {}

  /** alternation := sequence ('|' sequence)* */
  alternation(): Need {
    const branches: Need = [];
    for (;;) {
      branches.push(...this.sequence());
      if (this.src[this.pos] !== "|") break;
      this.pos++;
    }
    return branches;
  }

  /** A run of atoms; consecutive plain characters that must occur once each form one literal. */
  sequence(): Need {
    let need: Need = NOTHING;
    let run = "";
    const flush = () => {
      if (run.length >= MIN_LITERAL) need = and(need, [[run]]);
      run = "";
    };
    while (this.pos < this.src.length && this.src[this.pos] !== "|" && this.src[this.pos] !== ")") {
      const atom = this.atom();
      const quantifier = this.quantifier();
      if (atom.kind === "char") {
        if (quantifier === "none") run += atom.char;
        else if (quantifier === "one-or-more") {
          run += atom.char;
          flush();
        } else flush();
      } else {
        flush();
        if (atom.kind === "group" && quantifier !== "optional") need = and(need, atom.need);
      }
    }
    flush();
    return need;
  }

  atom(): { kind: "char"; char: string } | { kind: "group"; need: Need } | { kind: "other" } {
    const c = this.src[this.pos++]!;
    switch (c) {
      case "\\":
        return this.escape();
      case "[":
        this.skipClass();
        return { kind: "other" };
      case "(":
        return this.group();
      case ".":
      case "^":
      case "$":
        return { kind: "other" };
      default:
        return { kind: "char", char: c };
    }
  }

  escape(): { kind: "char"; char: string } | { kind: "other" } {
    const c = this.src[this.pos++];
    if (c === undefined) return { kind: "other" };
    if (CLASS_ESCAPES.has(c)) return { kind: "other" };
    if (c in CONTROL_ESCAPES) return { kind: "char", char: CONTROL_ESCAPES[c]! };
    if (/[0-9]/.test(c)) {
      // A back-reference (or an octal escape): its text is not known here.
      while (/[0-9]/.test(this.src[this.pos] ?? "")) this.pos++;
      return { kind: "other" };
    }
    if (c === "k" && this.src[this.pos] === "<") {
      this.pos = Math.max(this.pos, this.src.indexOf(">", this.pos) + 1);
      return { kind: "other" };
    }
    if (c === "x" && /^[0-9a-fA-F]{2}$/.test(this.src.slice(this.pos, this.pos + 2))) {
      const char = String.fromCharCode(parseInt(this.src.slice(this.pos, this.pos + 2), 16));
      this.pos += 2;
      return { kind: "char", char };
    }
    if (c === "u" && /^[0-9a-fA-F]{4}$/.test(this.src.slice(this.pos, this.pos + 4))) {
      const char = String.fromCharCode(parseInt(this.src.slice(this.pos, this.pos + 4), 16));
      this.pos += 4;
      return { kind: "char", char };
    }
    if (c === "c" && /[A-Za-z]/.test(this.src[this.pos] ?? "")) {
      this.pos++;
      return { kind: "other" };
    }
    if ((c === "x" || c === "u" || c === "p" || c === "P") && this.src[this.pos] === "{") {
      this.pos = Math.max(this.pos, this.src.indexOf("}", this.pos) + 1); // \x{10FFFF}, \p{Greek}
      return { kind: "other" };
    }
    if (c === "p" || c === "P") {
      this.pos++; // \pL: one letter names the class
      return { kind: "other" };
    }
    if (c === "Q") this.unsure = true;
    if (c === "c" || c === "x" || c === "u" || c === "A" || c === "z" || c === "Q" || c === "E")
      return { kind: "other" };
    return { kind: "char", char: c };
  }

  skipClass(): void {
    while (this.pos < this.src.length) {
      const c = this.src[this.pos++];
      if (c === "\\") this.pos++;
      else if (c === "[" && this.src[this.pos] === ":")
        this.pos = Math.max(this.pos, this.src.indexOf(":]", this.pos) + 2); // [[:alpha:]]
      else if (c === "]") return;
    }
  }

  group(): { kind: "group"; need: Need } | { kind: "other" } {
    if (this.src[this.pos] === "?") {
      const flags = /^\?([a-zA-Z-]+)([:)])/.exec(this.src.slice(this.pos));
      if (this.src[this.pos + 1] === ":") this.pos += 2;
      else if (this.src[this.pos + 1] === "<" || this.src.startsWith("?P<", this.pos))
        this.pos = Math.max(this.pos, this.src.indexOf(">", this.pos) + 1);
      else if (flags) {
        if (flags[1]!.includes("i")) this.unsure = true;
        this.pos += flags[0].length;
        if (flags[2] === ")") return { kind: "other" }; // (?s): flags for the rest, no group
      }
    }
    const need = this.alternation();
    if (this.src[this.pos] === ")") this.pos++;
    return { kind: "group", need };
  }

  quantifier(): "none" | "one-or-more" | "optional" {
    const c = this.src[this.pos];
    let kind: "none" | "one-or-more" | "optional" = "none";
    if (c === "*" || c === "?") {
      this.pos++;
      kind = "optional";
    } else if (c === "+") {
      this.pos++;
      kind = "one-or-more";
    } else if (c === "{") {
      const m = /^\{(\d+)(,\d*)?\}/.exec(this.src.slice(this.pos));
      if (!m) return "none"; // a literal "{" in non-unicode syntax
      this.pos += m[0].length;
      kind = Number(m[1]) === 0 ? "optional" : m[2] === undefined && Number(m[1]) === 1 ? "none" : "one-or-more";
    } else return "none";
    if (this.src[this.pos] === "?") this.pos++; // lazy
    return kind;
  }
}

/** The literals a match of `pattern` must contain, or null when the index cannot narrow it. */
export function regexLiterals(pattern: string): string[][] | null {
  const reader = new Reader(pattern);
  const need = reader.alternation();
  return reader.unsure || need.some((branch) => branch.length === 0) ? null : withoutWiderBranches(need);
}

/**
 * The same alternatives without those that demand everything another one does and more: "a or (a and b)" is
 * "a", and every branch costs the index a lookup. The first of equal branches stays.
 */
function withoutWiderBranches(need: Need): Need {
  const sets = need.map((branch) => new Set(branch));
  const covers = (i: number, j: number) => [...sets[i]!].every((literal) => sets[j]!.has(literal));
  return need.filter(
    (_, j) => !sets.some((_, i) => i !== j && covers(i, j) && (sets[i]!.size < sets[j]!.size || i < j)),
  );
}

/** The same for a plain-text term: itself, when it is long enough. */
export const plainLiterals = (term: string): string[][] | null => (term.length >= MIN_LITERAL ? [[term]] : null);

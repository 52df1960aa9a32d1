/**
 * Finds the lines containing each of a policy's literals in ONE pass over a configuration (Aho-Corasick over
 * ASCII), instead of one indexOf pass per literal: a 50-rule policy has about 45 distinct literals, and
 * scanning a 30 KB text 45 times was most of an evaluation's cost. Built once per policy.
 *
 * Literals with non-ASCII characters, and those past MAX_STATES (a huge policy), are left out: ConfigText
 * finds those with indexOf as before. No literal contains a line break (patterns cannot), so the automaton
 * restarts at each line and a match never spans two lines.
 */
const ALPHABET = 128;
const MAX_STATES = 20_000;

export class LiteralScanner {
  /** The literals this scanner finds; the others are not its business. */
  readonly literals: string[] = [];
  /** Position of each literal in `literals`, and so in what scan() returns. */
  readonly idOf = new Map<string, number>();
  /**
   * Transitions, `classes` per state; characters are mapped to classes first (those in no literal: class 0). An
   * entry is the next state's row (its number times `classes`, so the loop adds instead of multiplying) shifted
   * left once, with the low bit set when some literal ends in that state: one load per character, nothing more.
   */
  private readonly delta: Int32Array;
  private readonly classes: number;
  /** Every UTF-16 code unit's class: 64 KB, so the scan loop needs no branch for line breaks or non-ASCII. */
  private readonly classOf = new Uint8Array(65536);
  /** Per state, the literals (indexes into `literals`) that end there, or null. */
  private readonly outputs: (number[] | null)[];

  constructor(candidates: Iterable<string>) {
    const goto: Int32Array[] = [new Int32Array(ALPHABET).fill(-1)];
    const outputs: (number[] | null)[] = [null];
    for (const literal of new Set(candidates)) {
      if (!/^[\x00-\x7f]+$/.test(literal) || goto.length + literal.length > MAX_STATES) continue;
      let s = 0;
      for (let i = 0; i < literal.length; i++) {
        const c = literal.charCodeAt(i);
        if (goto[s]![c] === -1) {
          goto[s]![c] = goto.length;
          goto.push(new Int32Array(ALPHABET).fill(-1));
          outputs.push(null);
        }
        s = goto[s]![c]!;
      }
      (outputs[s] ??= []).push(this.literals.length);
      this.idOf.set(literal, this.literals.length);
      this.literals.push(literal);
    }
    // Breadth first: each state's failure link, its outputs merged with its failure's, transitions completed.
    const fail = new Int32Array(goto.length);
    const delta = new Int32Array(goto.length * ALPHABET);
    const queue: number[] = [];
    for (let c = 0; c < ALPHABET; c++) {
      const t = goto[0]![c]!;
      delta[c] = t === -1 ? 0 : t;
      if (t !== -1) queue.push(t);
    }
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      const f = fail[s]!;
      if (outputs[f]) outputs[s] = [...(outputs[s] ?? []), ...outputs[f]!];
      for (let c = 0; c < ALPHABET; c++) {
        const t = goto[s]![c]!;
        if (t === -1) delta[s * ALPHABET + c] = delta[f * ALPHABET + c]!;
        else {
          delta[s * ALPHABET + c] = t;
          fail[t] = delta[f * ALPHABET + c]!;
          queue.push(t);
        }
      }
    }
    // Only characters that occur in some literal need a column of their own: a smaller table stays in cache.
    let classes = 1;
    for (const literal of this.literals) for (let i = 0; i < literal.length; i++) {
      const c = literal.charCodeAt(i);
      if (this.classOf[c] === 0) this.classOf[c] = classes++;
    }
    const representative = new Int32Array(classes).fill(0); // class 0: any character in no literal (NUL is in none)
    for (let c = 0; c < ALPHABET; c++) if (this.classOf[c]) representative[this.classOf[c]!] = c;
    this.classes = classes;
    this.delta = new Int32Array(goto.length * classes);
    for (let s = 0; s < goto.length; s++) {
      for (let k = 0; k < classes; k++) {
        const t = delta[s * ALPHABET + representative[k]!]!;
        this.delta[s * classes + k] = ((t * classes) << 1) | (outputs[t] ? 1 : 0);
      }
    }
    this.outputs = outputs;
  }

  /**
   * For each literal (by its id), the ascending 0-based lines of `text` containing it. `starts`: each line's
   * first offset and, last, one past the end (ConfigText's). A line break's class (0: in no literal) sends the
   * automaton back to its start, so no match spans two lines.
   */
  scan(text: string, starts: Int32Array): number[][] {
    const { delta, outputs, classOf, classes } = this;
    const found: number[][] = this.literals.map(() => []);
    const last = new Int32Array(this.literals.length).fill(-1);
    let row = 0;
    let line = 0;
    for (let i = 0, n = text.length; i < n; i++) {
      const next = delta[row + classOf[text.charCodeAt(i)]!]!;
      row = next >> 1;
      if ((next & 1) === 1) {
        while (starts[line + 1]! <= i) line++;
        for (const id of outputs[row / classes]!) {
          if (last[id] !== line) {
            last[id] = line;
            found[id]!.push(line);
          }
        }
      }
    }
    return found;
  }
}

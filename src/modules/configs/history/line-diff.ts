/**
 * Which lines two texts have in common, fast enough for 100,000-line configurations (the `diff` package's plain
 * Myers search takes seconds there). Lines are interned to integers; common prefix and suffix are matched
 * directly; lines that occur exactly once on each side anchor the rest (patience diff: the longest increasing
 * run of such pairs), and the stretches between anchors recurse. A stretch with no unique common line goes to
 * Myers' O(ND) search, which gives up past a bounded effort and leaves that stretch as removed-then-added:
 * still a correct diff, only not a minimal one, and never a request that hangs.
 */

/** Edit distance past which one stretch stops being searched (Myers keeps O(D^2) state to trace its path). */
const MAX_EDIT_DISTANCE = 2048;
/** Comparisons one whole diff may spend before the remaining stretches are left unmatched. */
const BASE_BUDGET = 20_000_000;

/**
 * For each line of `a`, the index of the line of `b` it corresponds to, or -1 when it was removed. Matched
 * indexes increase with the line, so every b index not named is an added line.
 */
export function matchLines(
  a: readonly string[],
  b: readonly string[],
  budget = BASE_BUDGET + 20 * (a.length + b.length),
): Int32Array {
  const ids = new Map<string, number>();
  const intern = (line: string) => {
    let id = ids.get(line);
    if (id === undefined) ids.set(line, (id = ids.size));
    return id;
  };
  const A = Int32Array.from(a, intern);
  const B = Int32Array.from(b, intern);
  const search = new Search(A, B, ids.size, budget);
  search.run();
  return search.match;
}

class Search {
  readonly match: Int32Array;
  private readonly countA: Int32Array;
  private readonly countB: Int32Array;
  private readonly posB: Int32Array;
  private work = 0;

  constructor(
    private readonly A: Int32Array,
    private readonly B: Int32Array,
    keys: number,
    private readonly budget: number,
  ) {
    this.match = new Int32Array(A.length).fill(-1);
    this.countA = new Int32Array(keys);
    this.countB = new Int32Array(keys);
    this.posB = new Int32Array(keys);
  }

  run(): void {
    const { A, B, match } = this;
    // Stretches still to align, four numbers each: aLo, aHi, bLo, bHi (half-open).
    const todo: number[] = [0, A.length, 0, B.length];
    while (todo.length) {
      const bHi0 = todo.pop()!,
        bLo0 = todo.pop()!,
        aHi0 = todo.pop()!,
        aLo0 = todo.pop()!;
      let aLo = aLo0,
        aHi = aHi0,
        bLo = bLo0,
        bHi = bHi0;
      while (aLo < aHi && bLo < bHi && A[aLo] === B[bLo]) match[aLo++] = bLo++;
      while (aLo < aHi && bLo < bHi && A[aHi - 1] === B[bHi - 1]) match[--aHi] = --bHi;
      if (aLo === aHi || bLo === bHi) continue;
      if (this.work > this.budget) continue;
      const anchors = this.uniqueAnchors(aLo, aHi, bLo, bHi);
      if (anchors.length) {
        let a0 = aLo,
          b0 = bLo;
        for (let i = 0; i < anchors.length; i += 2) {
          const ai = anchors[i]!,
            bi = anchors[i + 1]!;
          match[ai] = bi;
          todo.push(a0, ai, b0, bi);
          a0 = ai + 1;
          b0 = bi + 1;
        }
        todo.push(a0, aHi, b0, bHi);
      } else {
        this.myers(aLo, aHi, bLo, bHi);
      }
    }
  }

  /**
   * Pairs (a index, b index), flattened, of lines occurring exactly once in each side of the stretch, keeping
   * the longest run whose b indexes increase (so they can all be matched at once).
   */
  private uniqueAnchors(aLo: number, aHi: number, bLo: number, bHi: number): number[] {
    const { A, B, countA, countB, posB } = this;
    this.work += aHi - aLo + bHi - bLo;
    for (let i = aLo; i < aHi; i++) countA[A[i]!]!++;
    for (let j = bLo; j < bHi; j++) {
      countB[B[j]!]!++;
      posB[B[j]!] = j;
    }
    const candA: number[] = [];
    const candB: number[] = [];
    for (let i = aLo; i < aHi; i++) {
      const k = A[i]!;
      if (countA[k] === 1 && countB[k] === 1) {
        candA.push(i);
        candB.push(posB[k]!);
      }
    }
    for (let i = aLo; i < aHi; i++) countA[A[i]!] = 0;
    for (let j = bLo; j < bHi; j++) countB[B[j]!] = 0;
    if (!candA.length) return [];

    // Longest increasing subsequence of candB (patience sorting), in O(k log k).
    const tails: number[] = [];
    const prev = new Int32Array(candB.length);
    for (let c = 0; c < candB.length; c++) {
      const v = candB[c]!;
      let lo = 0,
        hi = tails.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (candB[tails[mid]!]! < v) lo = mid + 1;
        else hi = mid;
      }
      prev[c] = lo > 0 ? tails[lo - 1]! : -1;
      tails[lo] = c;
    }
    const out = new Array<number>(tails.length * 2);
    for (let c = tails[tails.length - 1]!, n = tails.length - 1; c >= 0; c = prev[c]!, n--) {
      out[2 * n] = candA[c]!;
      out[2 * n + 1] = candB[c]!;
    }
    return out;
  }

  /** Myers' greedy shortest edit script over one stretch, traced back into matches; gives up past the limits. */
  private myers(aLo: number, aHi: number, bLo: number, bHi: number): void {
    const { A, B, match } = this;
    const n = aHi - aLo,
      m = bHi - bLo;
    const maxD = Math.min(n + m, MAX_EDIT_DISTANCE);
    const offset = maxD + 1;
    const v = new Int32Array(2 * maxD + 3);
    const trace: Int32Array[] = [];
    let found = -1;
    for (let d = 0; d <= maxD && found < 0; d++) {
      for (let k = -d; k <= d; k += 2) {
        let x =
          k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
            ? v[offset + k + 1]!
            : v[offset + k - 1]! + 1;
        let y = x - k;
        const start = x;
        while (x < n && y < m && A[aLo + x] === B[bLo + y]) {
          x++;
          y++;
        }
        this.work += x - start + 1;
        v[offset + k] = x;
        if (x >= n && y >= m) {
          found = d;
          break;
        }
      }
      trace.push(v.slice(offset - d, offset + d + 1));
      if (this.work > this.budget) return;
    }
    if (found < 0) return;

    let x = n,
      y = m;
    for (let d = found; d > 0; d--) {
      const pv = trace[d - 1]!;
      const at = (k: number) => pv[k + d - 1]!;
      const k = x - y;
      const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
      const prevX = at(prevK);
      const prevY = prevX - prevK;
      while (x > prevX && y > prevY) {
        x--;
        y--;
        match[aLo + x] = bLo + y;
      }
      x = prevX;
      y = prevY;
    }
    while (x > 0 && y > 0) {
      x--;
      y--;
      match[aLo + x] = bLo + y;
    }
  }
}

/**
 * The literal scanner's inner loops as a tiny WebAssembly module, assembled here from its opcodes (no toolchain,
 * nothing fetched, about 400 bytes). Why: the automaton is table-driven, one step per byte, and in JavaScript
 * every step pays bounds checks on three arrays and runs out of registers when several streams are stepped side
 * by side; compiled WebAssembly does neither.
 *
 * Two jobs, two loops, because they cost differently:
 * - `newlines`: every line break's address, 16 bytes at a time (SIMD compare, then one store per break). A
 *   30 KB configuration has about 800 lines.
 * - `scan4`/`scan1`: the automaton, which only needs to record where a literal ends: a few hundred steps of a
 *   configuration's 30,000. Recording every line break in it too (as it first did, branch-free, one store
 *   every step) took more instructions than stepping; with breaks gone, a hit is rare enough for a branch.
 *
 * Memory layout (byte offsets), filled by the caller:
 *   CLASS_AT: 256 i32, each byte's class times 4 (its column's byte offset in a row)
 *   STATE_AT: 8 i32, where scan4 leaves each stream's row, then each stream's output address, when it stops
 *   DELTA_AT: the transition table, i32 entries: the next state's row as a byte offset (state * classes * 4).
 *             States where some literal ends are numbered last, so "a literal ends here" is `row >= endsAt`.
 *   then the text's bytes and the output buffers, where the caller puts them.
 * A hit is written as two i32: the address of the byte a literal ends on, and the row it led to.
 */
export const CLASS_AT = 0;
export const STATE_AT = 1024;
export const DELTA_AT = 1056;

const Op = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Load: 0x28,
  i32Load8u: 0x2d,
  i32Store: 0x36,
  i32Const: 0x41,
  i32Eqz: 0x45,
  i32GeU: 0x4f,
  i32Ctz: 0x68,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32And: 0x71,
  i32Shl: 0x74,
  simd: 0xfd,
} as const;
/** SIMD instructions, after the 0xfd prefix. */
const Simd = { v128Load: 0x00, i8x16Splat: 0x0f, i8x16Eq: 0x23, i8x16Bitmask: 0x64 } as const;
const VOID = 0x40;
const I32 = 0x7f;
const V128 = 0x7b;

const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
};
const sleb = (n: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) return [...out, byte];
    out.push(byte | 0x80);
  }
};
const get = (l: number) => [Op.localGet, ...uleb(l)];
const set = (l: number) => [Op.localSet, ...uleb(l)];
const i32 = (n: number) => [Op.i32Const, ...sleb(n)];
const load = (offset: number) => [Op.i32Load, 2, ...uleb(offset)];
const store = (offset: number) => [Op.i32Store, 2, ...uleb(offset)];
const inc = (l: number, by = 1) => [...get(l), ...i32(by), Op.i32Add, ...set(l)];

/** row = delta[row + class(byte at address `pos`)]. */
const step = (pos: number, row: number) => [
  ...get(row),
  ...get(pos),
  Op.i32Load8u,
  0,
  0,
  ...i32(2),
  Op.i32Shl,
  ...load(CLASS_AT),
  Op.i32Add,
  ...load(DELTA_AT),
  ...set(row),
];
/** When a literal ends at `pos` (row >= endsAt): its address and row at `out`, and `out` moves on. */
const record = (pos: number, row: number, out: number, endsAt: number) => [
  ...get(row),
  ...get(endsAt),
  Op.i32GeU,
  Op.if,
  VOID,
  ...get(out),
  ...get(pos),
  ...store(0),
  ...get(out),
  ...get(row),
  ...store(4),
  ...inc(out, 8),
  Op.end,
];

/**
 * scan4(a, b, c, d, steps, outA, outB, outC, outD, endsAt): steps bytes of four streams from addresses a, b, c,
 * d, each starting at row 0, each writing its hits from its own output address; leaves the four rows, then the
 * four output addresses, at STATE_AT. Locals: 0-3 positions, 4 steps, 5-8 outputs, 9 endsAt, 10-13 rows.
 */
function scan4Body(): number[] {
  const [pos, steps, out, endsAt, row] = [[0, 1, 2, 3], 4, [5, 6, 7, 8], 9, [10, 11, 12, 13]] as const;
  const body: number[] = [Op.block, VOID, Op.loop, VOID, ...get(steps), Op.i32Eqz, Op.brIf, 1];
  for (let s = 0; s < 4; s++) body.push(...step(pos[s]!, row[s]!));
  for (let s = 0; s < 4; s++) body.push(...record(pos[s]!, row[s]!, out[s]!, endsAt));
  for (let s = 0; s < 4; s++) body.push(...inc(pos[s]!));
  body.push(...inc(steps, -1), Op.br, 0, Op.end, Op.end);
  for (let s = 0; s < 4; s++) body.push(...i32(0), ...get(row[s]!), ...store(STATE_AT + 4 * s));
  for (let s = 0; s < 4; s++) body.push(...i32(0), ...get(out[s]!), ...store(STATE_AT + 16 + 4 * s));
  body.push(Op.end);
  return [1, 4, I32, ...body]; // one local group: 4 more i32 (rows)
}

/** scan1(from, to, row, out, endsAt) -> out': one stream from address `from` to `to`, starting at `row`. */
function scan1Body(): number[] {
  const [pos, to, row, out, endsAt] = [0, 1, 2, 3, 4];
  return [
    0,
    Op.block,
    VOID,
    Op.loop,
    VOID,
    ...get(pos),
    ...get(to),
    Op.i32GeU,
    Op.brIf,
    1,
    ...step(pos, row),
    ...record(pos, row, out, endsAt),
    ...inc(pos),
    Op.br,
    0,
    Op.end,
    Op.end,
    ...get(out),
    Op.end,
  ];
}

/**
 * newlines(from, to, out) -> out': the address of every "\n" in [from, to), ascending, one i32 each from `out`.
 * Reads 16 bytes at a time, so up to 15 bytes past `to`: the caller zeroes them. Locals: 3 mask, 4 the
 * sixteen "\n" bytes compared against.
 */
function newlinesBody(): number[] {
  const [from, to, out, mask, newline] = [0, 1, 2, 3, 4];
  const simd = (op: number) => [Op.simd, ...uleb(op)];
  return [
    2,
    1,
    I32,
    1,
    V128,
    ...i32(10),
    ...simd(Simd.i8x16Splat),
    ...set(newline),
    Op.block,
    VOID,
    Op.loop,
    VOID,
    ...get(from),
    ...get(to),
    Op.i32GeU,
    Op.brIf,
    1,
    ...get(from),
    ...simd(Simd.v128Load),
    0,
    0,
    ...get(newline),
    ...simd(Simd.i8x16Eq),
    ...simd(Simd.i8x16Bitmask),
    ...set(mask),
    Op.block,
    VOID,
    Op.loop,
    VOID,
    ...get(mask),
    Op.i32Eqz,
    Op.brIf,
    1,
    ...get(out),
    ...get(from),
    ...get(mask),
    Op.i32Ctz,
    Op.i32Add,
    ...store(0),
    ...inc(out, 4),
    ...get(mask),
    ...get(mask),
    ...i32(1),
    Op.i32Sub,
    Op.i32And,
    ...set(mask),
    Op.br,
    0,
    Op.end,
    Op.end,
    ...inc(from, 16),
    Op.br,
    0,
    Op.end,
    Op.end,
    ...get(out),
    Op.end,
  ];
}

const section = (id: number, content: number[]) => [id, ...uleb(content.length), ...content];
const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const name = (s: string) => [...uleb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
const funcType = (params: number, results: number) => [
  0x60,
  ...uleb(params),
  ...Array(params).fill(I32),
  ...uleb(results),
  ...Array(results).fill(I32),
];

function moduleBytes(): Uint8Array<ArrayBuffer> {
  const bodies = [scan4Body(), scan1Body(), newlinesBody()];
  return Uint8Array.from([
    0x00,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    ...section(1, vec([funcType(10, 0), funcType(5, 1), funcType(3, 1)])),
    ...section(3, vec([[0], [1], [2]])),
    ...section(5, vec([[0, 1]])), // one memory, at least one page, no maximum
    ...section(
      7,
      vec([
        [...name("memory"), 2, 0],
        [...name("scan4"), 0, 0],
        [...name("scan1"), 0, 1],
        [...name("newlines"), 0, 2],
      ]),
    ),
    ...section(10, vec(bodies.map((b) => [...uleb(b.length), ...b]))),
  ]);
}

export type DfaModule = {
  memory: WebAssembly.Memory;
  scan4(
    a: number,
    b: number,
    c: number,
    d: number,
    steps: number,
    outA: number,
    outB: number,
    outC: number,
    outD: number,
    endsAt: number,
  ): void;
  scan1(from: number, to: number, row: number, out: number, endsAt: number): number;
  newlines(from: number, to: number, out: number): number;
};

let instance: DfaModule | null = null;

/** The one instance (evaluation is synchronous, so scans never interleave in its memory). */
export function dfaModule(): DfaModule {
  if (!instance) {
    const { exports } = new WebAssembly.Instance(new WebAssembly.Module(moduleBytes()));
    instance = exports as unknown as DfaModule;
  }
  return instance;
}

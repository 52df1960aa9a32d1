/**
 * The literal scanner's inner loop as a tiny WebAssembly module, assembled here from its opcodes (no toolchain,
 * nothing fetched, about 300 bytes). Why: the loop is a table-driven automaton, one step per byte, and in
 * JavaScript every step pays bounds checks on three arrays and runs out of registers when several streams are
 * stepped side by side; compiled WebAssembly does neither, and runs 4 streams at about 0.5 ns a byte.
 *
 * Memory layout (byte offsets), filled by the caller:
 *   CLASS_AT: 256 i32, each byte's class times 4 (its column's byte offset in a row)
 *   STATE_AT: 8 i32, where scan4 leaves each stream's row, then each stream's output address, when it stops
 *   DELTA_AT: the transition table, i32 entries `rowBytes << 2 | lineEnd << 1 | endsLiteral`, where rowBytes
 *             is the next state's number times classes times 4
 *   then the text's bytes and the event buffers, where the caller puts them.
 * An event (a step whose entry has either low bit set) is written as one i32 (see `record`).
 */
export const CLASS_AT = 0;
export const STATE_AT = 1024;
export const DELTA_AT = 1056;

const Op = {
  block: 0x02, loop: 0x03, end: 0x0b, br: 0x0c, brIf: 0x0d,
  localGet: 0x20, localSet: 0x21, localTee: 0x22,
  i32Load: 0x28, i32Load8u: 0x2d, i32Store: 0x36, i32Const: 0x41,
  i32Eqz: 0x45, i32Eq: 0x46, i32Ne: 0x47, i32GeU: 0x4f, select: 0x1b, i32Add: 0x6a, i32And: 0x71, i32Or: 0x72, i32Shl: 0x74, i32ShrU: 0x76,
} as const;
const VOID = 0x40;
const I32 = 0x7f;

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
const tee = (l: number) => [Op.localTee, ...uleb(l)];
const i32 = (n: number) => [Op.i32Const, ...sleb(n)];
const load = (offset: number) => [Op.i32Load, 2, ...uleb(offset)];
const store = (offset: number) => [Op.i32Store, 2, ...uleb(offset)];
const inc = (l: number, by = 1) => [...get(l), ...i32(by), Op.i32Add, ...set(l)];

/** entry = delta[row + class(byte at address `pos`)]; row = entry >> 2 (leaves nothing on the stack). */
const step = (pos: number, row: number, entry: number) => [
  ...get(row),
  ...get(pos), Op.i32Load8u, 0, 0,
  ...i32(2), Op.i32Shl, ...load(CLASS_AT),
  Op.i32Add, ...load(DELTA_AT), ...tee(entry),
  ...i32(2), Op.i32ShrU, ...set(row),
];
/**
 * Every step writes one i32 at `out`, and moves `out` on only for an event, so no branch: a line break is
 * written as `pos << 2 | 2` (its address), a literal's end as its entry (`rowBytes << 2 | 1`). Events are a few
 * percent of the steps, too many and too irregular for a branch the CPU could predict.
 */
const record = (pos: number, entry: number, out: number) => [
  ...get(out),
  ...get(pos), ...i32(2), Op.i32Shl, ...i32(2), Op.i32Or,
  ...get(entry),
  ...get(entry), ...i32(2), Op.i32Eq,
  Op.select, ...store(0),
  ...get(out), ...get(entry), ...i32(3), Op.i32And, ...i32(0), Op.i32Ne, ...i32(2), Op.i32Shl, Op.i32Add, ...set(out),
];

/**
 * scan4(a, b, c, d, steps, outA, outB, outC, outD): steps bytes of four streams from addresses a, b, c, d, each
 * starting at row 0, each writing its events from its own output address; leaves the four rows, then the four
 * output addresses, at STATE_AT. Locals: 0-3 positions, 4 steps, 5-8 outputs, 9-12 rows, 13-16 entries.
 */
function scan4Body(): number[] {
  const [pos, steps, out, row, entry] = [[0, 1, 2, 3], 4, [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]] as const;
  const body: number[] = [Op.block, VOID, Op.loop, VOID, ...get(steps), Op.i32Eqz, Op.brIf, 1];
  for (let s = 0; s < 4; s++) body.push(...step(pos[s]!, row[s]!, entry[s]!));
  for (let s = 0; s < 4; s++) body.push(...record(pos[s]!, entry[s]!, out[s]!));
  for (let s = 0; s < 4; s++) body.push(...inc(pos[s]!));
  body.push(...inc(steps, -1), Op.br, 0, Op.end, Op.end);
  for (let s = 0; s < 4; s++) body.push(...i32(0), ...get(row[s]!), ...store(STATE_AT + 4 * s));
  for (let s = 0; s < 4; s++) body.push(...i32(0), ...get(out[s]!), ...store(STATE_AT + 16 + 4 * s));
  body.push(Op.end);
  return [1, 8, I32, ...body]; // one local group: 8 more i32 (rows, entries)
}

/** scan1(from, to, row, out) -> out': one stream from address `from` to `to`, starting at `row`. Locals: 4 entry. */
function scan1Body(): number[] {
  const [pos, to, row, out, entry] = [0, 1, 2, 3, 4];
  return [
    1, 1, I32,
    Op.block, VOID, Op.loop, VOID,
    ...get(pos), ...get(to), Op.i32GeU, Op.brIf, 1,
    ...step(pos, row, entry),
    ...record(pos, entry, out),
    ...inc(pos),
    Op.br, 0, Op.end, Op.end,
    ...get(out), Op.end,
  ];
}

const section = (id: number, content: number[]) => [id, ...uleb(content.length), ...content];
const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const name = (s: string) => [...uleb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
const funcType = (params: number, results: number) => [0x60, ...uleb(params), ...Array(params).fill(I32), ...uleb(results), ...Array(results).fill(I32)];

function moduleBytes(): Uint8Array<ArrayBuffer> {
  const bodies = [scan4Body(), scan1Body()];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, vec([funcType(9, 0), funcType(4, 1)])),
    ...section(3, vec([[0], [1]])),
    ...section(5, vec([[0, 1]])), // one memory, at least one page, no maximum
    ...section(7, vec([[...name("memory"), 2, 0], [...name("scan4"), 0, 0], [...name("scan1"), 0, 1]])),
    ...section(10, vec(bodies.map((b) => [...uleb(b.length), ...b]))),
  ]);
}

export type DfaModule = {
  memory: WebAssembly.Memory;
  scan4(a: number, b: number, c: number, d: number, steps: number, outA: number, outB: number, outC: number, outD: number): void;
  scan1(from: number, to: number, row: number, out: number): number;
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

/**
 * How a configuration's lines nest: for every line, the line just past its last descendant (`end`: its section
 * body is the lines between) and its parent.
 *
 * - indent (IOS, IOS-XE, NX-OS, EOS, Comware): a line's children are the lines after it indented deeper;
 *   blank lines never close a section.
 * - braces (Junos, VyOS): a line ending in `{` opens a section, a line starting with `}` closes it.
 * - fortios: `config ...` and `edit ...` open sections, `next` closes an `edit`, `end` closes a `config` (and
 *   any `edit` left open in it).
 * Unbalanced text (a truncated download) closes what is still open at the end; nothing throws.
 *
 * Indentation answers each question by looking only at the lines near it (see IndentHierarchy): a policy asks
 * about a few dozen section headers of a configuration's thousand lines. The other styles are worked out for
 * every line at once, once per evaluation and only when a rule needs them.
 */
import type { ConfigText } from "./config-text.ts";
import type { ConfigFamily } from "./types.ts";

export interface Hierarchy {
  /** The line just past line i's last descendant (i + 1 when it has none). */
  end(i: number): number;
  /** The header line of the innermost section line i is in, or -1. */
  parent(i: number): number;
}

/** Every line's end and parent, worked out in one pass. */
export type HierarchyArrays = { end: Int32Array; parent: Int32Array };

export function hierarchy(config: ConfigText, family: ConfigFamily): Hierarchy {
  if (family === "indent") return new IndentHierarchy(config);
  const { end, parent } = hierarchyArrays(config, family);
  return { end: (i) => end[i]!, parent: (i) => parent[i]! };
}

/**
 * Indentation nesting, answered per line from its neighbours, with the same answers hierarchyArrays gives:
 * - a blank line (spaces and tabs only) has no body (end i + 1), and its parent is the last non-blank line
 *   before it, which is always still open;
 * - a line's end is the next non-blank line indented no deeper than it (or the text's end), and its parent
 *   the last non-blank line before it indented less (none for a line indented by nothing).
 * Each answer walks the lines between; past a few walks of the whole text (deep nesting asked about line by
 * line) it works every line out at once instead, so no evaluation costs more than a few passes.
 */
class IndentHierarchy implements Hierarchy {
  private readonly ends: Int32Array;
  private walked = 0;
  private arrays: HierarchyArrays | null = null;
  constructor(private readonly config: ConfigText) {
    this.ends = new Int32Array(config.lineCount); // end + 1 once known; 0: not yet
  }

  end(i: number): number {
    if (this.arrays) return this.arrays.end[i]!;
    const known = this.ends[i]!;
    if (known !== 0) return known - 1;
    const n = this.config.lineCount;
    const d = indentOf(this.config, i);
    let j = i + 1;
    if (d === 0) {
      // A top-level header (most are): only a line starting with neither a space nor a tab nor its line break
      // can end it; indentOf tells whether that one is blank ("\r" alone).
      const { text } = this.config;
      for (; j < n; j++) {
        const c = text.charCodeAt(this.config.start(j));
        if (c !== SPACE && c !== TAB && c !== NEWLINE && indentOf(this.config, j) === 0) break;
      }
    } else if (d > 0) {
      for (; j < n; j++) {
        const e = indentOf(this.config, j);
        if (e >= 0 && e <= d) break;
      }
    }
    this.spend(j - i);
    this.ends[i] = j + 1;
    return j;
  }

  parent(i: number): number {
    if (this.arrays) return this.arrays.parent[i]!;
    const d = indentOf(this.config, i);
    if (d === 0) return -1;
    let j = i - 1;
    for (; j >= 0; j--) {
      const e = indentOf(this.config, j);
      if (e >= 0 && (d < 0 || e < d)) break;
    }
    this.spend(i - j);
    return j;
  }

  private spend(lines: number): void {
    this.walked += lines;
    if (this.walked > 4 * this.config.lineCount + 64) this.arrays = hierarchyArrays(this.config, "indent");
  }
}

const SPACE = 32;
const TAB = 9;
const NEWLINE = 10;
const CR = 13;

export function hierarchyArrays(config: ConfigText, family: ConfigFamily): HierarchyArrays {
  const n = config.lineCount;
  const end = new Int32Array(n);
  const parent = new Int32Array(n).fill(-1);
  const text = config.text;
  const stack: number[] = [];
  const top = () => (stack.length > 0 ? stack[stack.length - 1]! : -1);
  const close = (at: number) => {
    end[stack.pop()!] = at;
  };
  // Whether stack entries are FortiOS `edit`s (true) or `config`s (false).
  const isEdit: boolean[] = [];
  // indent family: each open section's indentation, beside `stack`.
  const indents: number[] = [];

  for (let i = 0; i < n; i++) {
    end[i] = i + 1;
    const start = config.start(i);
    let a = start;
    const e = config.end(i);
    while (a < e && (text.charCodeAt(a) === SPACE || text.charCodeAt(a) === TAB)) a++;
    if (a === e) {
      parent[i] = top();
      continue;
    }
    if (family === "indent") {
      const indent = a - start;
      while (stack.length > 0 && indents[indents.length - 1]! >= indent) {
        close(i);
        indents.pop();
      }
      parent[i] = top();
      stack.push(i);
      indents.push(indent);
      continue;
    }
    let b = e;
    while (
      b > a &&
      (text.charCodeAt(b - 1) === SPACE || text.charCodeAt(b - 1) === TAB || text.charCodeAt(b - 1) === CR)
    )
      b--;
    if (family === "braces") {
      if (text.charCodeAt(a) === 125 /* } */) {
        if (stack.length > 0) close(i);
        parent[i] = top();
      } else {
        parent[i] = top();
        if (text.charCodeAt(b - 1) === 123 /* { */) stack.push(i);
      }
      continue;
    }
    const word = text.slice(a, b);
    if (word === "next") {
      if (isEdit[isEdit.length - 1]) {
        close(i);
        isEdit.pop();
      }
      parent[i] = top();
    } else if (word === "end") {
      while (isEdit[isEdit.length - 1]) {
        close(i);
        isEdit.pop();
      }
      if (stack.length > 0) {
        close(i);
        isEdit.pop();
      }
      parent[i] = top();
    } else {
      parent[i] = top();
      if (word.startsWith("config ") || word.startsWith("edit ")) {
        stack.push(i);
        isEdit.push(word.startsWith("edit "));
      }
    }
  }
  while (stack.length > 0) close(n);
  return { end, parent };
}

/** Line i's indentation (leading spaces and tabs), or -1 when it has nothing else. */
function indentOf(config: ConfigText, i: number): number {
  const text = config.text;
  const start = config.start(i);
  const e = config.end(i);
  let a = start;
  while (a < e && (text.charCodeAt(a) === SPACE || text.charCodeAt(a) === TAB)) a++;
  return a === e ? -1 : a - start;
}

/**
 * How a configuration's lines nest, worked out once per evaluation (and only when a rule needs it): for every
 * line, the line just past its last descendant (`end`: its section body is the lines between) and its parent.
 *
 * - indent (IOS, IOS-XE, NX-OS, EOS, Comware): a line's children are the lines after it indented deeper;
 *   blank lines never close a section.
 * - braces (Junos, VyOS): a line ending in `{` opens a section, a line starting with `}` closes it.
 * - fortios: `config ...` and `edit ...` open sections, `next` closes an `edit`, `end` closes a `config` (and
 *   any `edit` left open in it).
 * Unbalanced text (a truncated download) closes what is still open at the end; nothing throws.
 */
import type { ConfigText } from "./config-text.ts";
import type { ConfigFamily } from "./types.ts";

export type Hierarchy = { end: Int32Array; parent: Int32Array };

const SPACE = 32;
const TAB = 9;
const CR = 13;

export function hierarchy(config: ConfigText, family: ConfigFamily): Hierarchy {
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
    while (b > a && (text.charCodeAt(b - 1) === SPACE || text.charCodeAt(b - 1) === TAB || text.charCodeAt(b - 1) === CR)) b--;
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

/**
 * What is stored of a NETCONF `<get-config>` answer: the content of `<rpc-reply><data>` as canonical, pretty-printed
 * XML, so an unchanged configuration is byte for byte the same text however the device ordered its attributes,
 * repeated its namespace declarations or indented its answer, and a diff shows one element per line. Secrets
 * (elements the template's `netconf.secrets` names) are masked and volatile parts (`netconf.drop`) removed as the
 * answer is read, before any text is written. Pure: used by the collector (store thread, session) and the tests.
 *
 * Canonical form: two-space indent; an element holding only text on one line; an empty one as `<a/>`; text
 * trimmed; attributes with namespace declarations first (`xmlns`, then `xmlns:p` by prefix), then the others by
 * name; a namespace declaration that repeats the one in force is left out. Comments, processing instructions
 * and the XML declaration are left out. Element order is kept: in a configuration it means something.
 *
 * A streaming parser (saxes, strict XML): a tree of a 50 MB configuration took fast-xml-parser 140 ms and ~30 bytes
 * of heap per byte of XML; this reads it at about 60 ms per MB, holding only the element path.
 */
import { SaxesParser, type SaxesTagPlain } from "saxes";
import { XML_SECRET_MARKER } from "./secret-grammar.ts";

/** An element path a template names: local names from the outside in, the last one the element (or `@attr`). */
export type ElementSelector = string;

export type NetconfTextRules = {
  /** Elements whose text (and every descendant's) is replaced by the mask, e.g. `encrypted-password`, `community/name`. */
  secrets: readonly ElementSelector[];
  /** Elements or attributes (`configuration/@changed-seconds`) left out of what is stored. */
  drop: readonly ElementSelector[];
};

/** The text a masked element holds. No `<`, so it reads the same in the XML as it does here. */
export const NETCONF_SECRET_MASK = XML_SECRET_MARKER;

/** A NETCONF answer that is not what was asked for, or no XML at all. */
export class NetconfReplyError extends Error {}

const localName = (qualified: string) => qualified.slice(qualified.indexOf(":") + 1);
const isDeclaration = (name: string) => name === "xmlns" || name.startsWith("xmlns:");

type Compiled = { path: string[]; attribute: string | undefined };

function compile(selectors: readonly ElementSelector[]): Compiled[] {
  return selectors.map((s) => {
    const parts = s.split("/").filter(Boolean);
    const last = parts.at(-1) ?? "";
    return last.startsWith("@")
      ? { path: parts.slice(0, -1), attribute: last.slice(1) }
      : { path: parts, attribute: undefined };
  });
}

/** Whether the element path (local names, outermost first) ends with the selector's path. */
const endsWith = (stack: readonly string[], path: readonly string[]) =>
  path.length <= stack.length && path.every((name, i) => stack[stack.length - path.length + i] === name);

const escapeText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const escapeAttribute = (s: string) =>
  s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/"/g, "&quot;")
    .replace(/\t/g, "&#9;")
    .replace(/\n/g, "&#10;")
    .replace(/\r/g, "&#13;");
const byName = ([a]: [string, string], [b]: [string, string]) => (a < b ? -1 : a > b ? 1 : 0);

/** Runs a strict streaming parse, its errors as NetconfReplyError. */
function parse(xml: string, on: (parser: SaxesParser) => void): void {
  const parser = new SaxesParser({ xmlns: false });
  let failed: Error | undefined;
  parser.on("error", (err) => (failed ??= err));
  on(parser);
  parser.write(xml).close();
  if (failed) throw new NetconfReplyError(`the device's answer is not well-formed XML: ${failed.message}`);
}

/** One element being written: its open tag waits until it is known to be empty, text only, or a parent. */
type Frame = {
  name: string;
  open: string;
  text: string;
  written: boolean;
  secret: boolean;
  scope: Map<string, string>;
};

/**
 * The stored text of a get-config answer: `<data>`'s children, canonical (see the header), secrets masked and
 * dropped parts removed. Ends with a newline; empty when `<data>` is empty. Throws NetconfReplyError when the
 * answer is not XML or has no `<rpc-reply>` holding `<data>`.
 */
export function netconfConfigText(reply: string, rules: NetconfTextRules): string {
  const compiled = compile(rules.secrets);
  const secrets = compiled.filter((c) => c.attribute === undefined).map((c) => c.path);
  const dropped = compile(rules.drop);
  const droppedElements = dropped.filter((c) => c.attribute === undefined).map((c) => c.path);
  const droppedAttributes = dropped.filter((c) => c.attribute !== undefined);

  const out = new TextSink();
  /** Local names of the open elements inside <data>, outermost first. */
  const stack: string[] = [];
  const frames: Frame[] = [];
  let depth = 0;
  let sawData = false;
  /** Inside the first <data> of the <rpc-reply>. */
  let inData = false;
  let rootOk = false;
  /** Open elements inside a dropped one (0: not in one). */
  let droppedDepth = 0;
  /** The declarations on rpc-reply and data: in force for the configuration. */
  let outerScope = new Map<string, string>();

  const indents: string[] = [];
  const indent = (level: number) => (indents[level] ??= "  ".repeat(level));
  /** Writes a frame's open tag (and any text before its first child) once it is known to have children. */
  const flush = (level: number) => {
    const f = frames[level]!;
    if (f.written) return;
    f.written = true;
    out.push(`${indent(level)}<${f.open}>\n`);
    const text = f.text.trim();
    if (text) out.push(indent(level + 1) + escapeText(f.secret ? NETCONF_SECRET_MASK : text) + "\n");
    f.text = "";
  };

  parse(reply, (parser) => {
    parser.on("opentag", (tag: SaxesTagPlain) => {
      depth++;
      const local = localName(tag.name);
      if (depth === 1) {
        rootOk = local === "rpc-reply";
        for (const [k, v] of Object.entries(tag.attributes)) if (isDeclaration(k)) outerScope.set(k, v);
        return;
      }
      if (depth === 2) {
        if (rootOk && local === "data" && !sawData) {
          sawData = true;
          inData = true;
          outerScope = new Map(outerScope);
          for (const [k, v] of Object.entries(tag.attributes)) if (isDeclaration(k)) outerScope.set(k, v);
        }
        return;
      }
      if (!inData) return;
      if (droppedDepth) {
        droppedDepth++;
        return;
      }
      stack.push(local);
      if (droppedElements.some((p) => endsWith(stack, p))) {
        stack.pop();
        droppedDepth = 1;
        return;
      }
      const parent = frames.at(-1);
      if (parent) flush(frames.length - 1);
      const scope = parent?.scope ?? outerScope;
      let inner = scope;
      const declared: [string, string][] = [];
      const plain: [string, string][] = [];
      for (const [k, v] of Object.entries(tag.attributes)) {
        if (isDeclaration(k)) {
          if (scope.get(k) === v) continue;
          // Copied only when a declaration changes something: most elements inherit their parent's map.
          if (inner === scope) inner = new Map(scope);
          inner.set(k, v);
          declared.push([k, v]);
        } else if (!droppedAttributes.some((d) => d.attribute === localName(k) && endsWith(stack, d.path)))
          plain.push([k, v]);
      }
      declared.sort((a, b) => (a[0] === "xmlns" ? -1 : b[0] === "xmlns" ? 1 : byName(a, b)));
      plain.sort(byName);
      const open = tag.name + [...declared, ...plain].map(([k, v]) => ` ${k}="${escapeAttribute(v)}"`).join("");
      const secret = (parent?.secret ?? false) || secrets.some((p) => endsWith(stack, p));
      frames.push({ name: tag.name, open, text: "", written: false, secret, scope: inner });
    });
    const onText = (text: string) => {
      if (!inData || droppedDepth || !frames.length) return;
      const f = frames.at(-1)!;
      if (!f.written) f.text += text;
      else if (text.trim())
        out.push(indent(frames.length) + escapeText(f.secret ? NETCONF_SECRET_MASK : text.trim()) + "\n");
    };
    parser.on("text", onText);
    parser.on("cdata", onText);
    parser.on("closetag", () => {
      const closing = depth--;
      if (!inData) return;
      if (closing === 2) {
        inData = false;
        return;
      }
      if (droppedDepth) {
        droppedDepth--;
        return;
      }
      const level = frames.length - 1;
      const f = frames.pop()!;
      stack.pop();
      if (f.written) {
        out.push(`${indent(level)}</${f.name}>\n`);
        return;
      }
      const text = f.text.trim();
      out.push(
        text
          ? `${indent(level)}<${f.open}>${escapeText(f.secret ? NETCONF_SECRET_MASK : text)}</${f.name}>\n`
          : `${indent(level)}<${f.open}/>\n`,
      );
    });
  });
  if (!rootOk) throw new NetconfReplyError("the device's answer is no <rpc-reply>");
  if (!sawData) throw new NetconfReplyError("the device's <rpc-reply> holds no <data>");
  return out.join();
}

/**
 * Lines written, kept in blocks of about 64 KB: an array of one string per line of an 80 MB text held millions of
 * small strings (twice the heap of the text itself).
 */
class TextSink {
  private blocks: string[] = [];
  private block = "";

  push(line: string): void {
    this.block += line;
    if (this.block.length >= 65_536) {
      this.blocks.push(this.block);
      this.block = "";
    }
  }

  join(): string {
    return this.blocks.join("") + this.block;
  }
}

/** An `<rpc-error>` of an answer, in words: its tag, severity, message and path as the device gave them. */
export type RpcError = { severity: string; tag: string; message: string; path: string; info: string };

/** The rpc-errors directly in an answer's `<rpc-reply>` (none for `<ok/>` or `<data>`). */
export function rpcErrorsOf(reply: string): RpcError[] {
  const errors: RpcError[] = [];
  let depth = 0;
  let current: (RpcError & { field?: string; infoItem?: string }) | undefined;
  let text = "";
  parse(reply, (parser) => {
    parser.on("opentag", (tag) => {
      depth++;
      const local = localName(tag.name);
      if (depth === 2 && local === "rpc-error")
        current = { severity: "error", tag: "", message: "", path: "", info: "" };
      else if (current && depth === 3) current.field = local;
      else if (current && depth === 4 && current.field === "error-info") current.infoItem = local;
      text = "";
    });
    parser.on("text", (t) => (text += t));
    parser.on("closetag", () => {
      if (current && depth === 4 && current.infoItem) {
        current.info += `${current.info ? ", " : ""}${current.infoItem}: ${text.trim()}`;
        current.infoItem = undefined;
      } else if (current && depth === 3) {
        const value = text.trim();
        if (current.field === "error-severity") current.severity = value || "error";
        else if (current.field === "error-tag") current.tag = value;
        else if (current.field === "error-message") current.message = value;
        else if (current.field === "error-path") current.path = value;
        current.field = undefined;
      } else if (current && depth === 2) {
        const { field: _f, infoItem: _i, ...error } = current;
        errors.push(error);
        current = undefined;
      }
      text = "";
      depth--;
    });
  });
  return errors;
}

/** An rpc-error as a person reads it: "invalid-value: <message> (at <path>; bad-element: x)". */
export function describeRpcError(e: RpcError): string {
  const details = [e.path && `at ${e.path}`, e.info].filter(Boolean).join("; ");
  return `${e.tag || "error"}${e.message ? `: ${e.message}` : ""}${details ? ` (${details})` : ""}`;
}

/** Why a piece of XML (a template's subtree filter) is not well-formed, or undefined when it is. */
export function xmlFragmentProblem(text: string): string | undefined {
  const parser = new SaxesParser({ xmlns: false, fragment: true });
  let problem: string | undefined;
  parser.on("error", (err) => (problem ??= err.message));
  parser.write(text).close();
  return problem;
}

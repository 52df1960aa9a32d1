type NodeBuffer = { byteLength(text: string, encoding: "utf8"): number };
const nodeBuffer = (globalThis as { process?: { getBuiltinModule?(id: string): unknown } }).process?.getBuiltinModule?.(
  "node:buffer",
) as { Buffer: NodeBuffer } | undefined;

/** The text's size in UTF-8 bytes, measured without encoding a copy of it where the runtime can (Node, Deno). */
export const utf8Length = (text: string): number =>
  nodeBuffer ? nodeBuffer.Buffer.byteLength(text, "utf8") : new TextEncoder().encode(text).length;

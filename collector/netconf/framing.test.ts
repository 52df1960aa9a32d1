import { describe, expect, it } from "vitest";
import { frame, FramingError, MessageDecoder } from "./framing.ts";

/** Every way a byte stream may be cut into packets must give the same messages (RFC 6242 framing). */
function decodeInPieces(bytes: Buffer, size: number, framing: "1.0" | "1.1"): string[] {
  const got: string[] = [];
  const decoder = new MessageDecoder(1 << 20, (m) => got.push(m));
  decoder.framing = framing;
  for (let i = 0; i < bytes.length; i += size) decoder.push(bytes.subarray(i, i + size));
  return got;
}

describe("NETCONF framing", () => {
  // Multi-byte characters straddle packets; "]]>" inside a message is no end of message.
  const messages = ["<rpc-reply><data>ünïcödé ]]> text</data></rpc-reply>", "<rpc-reply><ok/></rpc-reply>"];

  it.each([1, 2, 5, 6, 7, 13, 1000])("base:1.0 end-of-message, in packets of %i bytes", (size) => {
    expect(decodeInPieces(Buffer.concat(messages.map((m) => frame(m, "1.0"))), size, "1.0")).toEqual(messages);
  });

  it.each([1, 2, 3, 4, 13, 1000])("base:1.1 chunks, in packets of %i bytes", (size) => {
    // A message in several chunks, as devices send large ones.
    const body = Buffer.from(messages[0]!);
    const split = Buffer.concat([
      Buffer.from(`\n#10\n`),
      body.subarray(0, 10),
      Buffer.from(`\n#${body.length - 10}\n`),
      body.subarray(10),
      Buffer.from("\n##\n"),
    ]);
    expect(decodeInPieces(Buffer.concat([split, frame(messages[1]!, "1.1")]), size, "1.1")).toEqual(messages);
  });

  it("switches to chunks for the bytes after the hello, in the same packet", () => {
    const got: string[] = [];
    const decoder = new MessageDecoder(1 << 20, (m) => {
      got.push(m);
      decoder.framing = "1.1";
    });
    decoder.push(Buffer.concat([frame("<hello/>", "1.0"), frame("<rpc/>", "1.1")]));
    expect(got).toEqual(["<hello/>", "<rpc/>"]);
  });

  it.each(["\n#0\n", "\n#abc\n", "x", "\n#12345678901234\n", "\n#4294967296\n"])(
    "refuses the chunk header %j",
    (header) => {
      const decoder = new MessageDecoder(1 << 20, () => {});
      decoder.framing = "1.1";
      expect(() => decoder.push(Buffer.from(header))).toThrow(FramingError);
    },
  );

  it.each(["1.0", "1.1"] as const)("refuses a message over the size limit (%s)", (framing) => {
    const decoder = new MessageDecoder(100, () => {});
    decoder.framing = framing;
    expect(() => decoder.push(frame("x".repeat(101), framing))).toThrow("a NETCONF message exceeded");
  });
});

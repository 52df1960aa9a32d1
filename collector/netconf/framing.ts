/**
 * NETCONF message framing over SSH (RFC 6242): base:1.0 ends each message with `]]>]]>`; base:1.1, used once both
 * hellos name it, sends each message as chunks (`\n#<size>\n<bytes>`) closed by `\n##\n`. The decoder works on
 * bytes (chunk sizes count octets, and a multi-byte character may straddle SSH packets) and never joins what it
 * has received before a message is whole, so a large configuration costs one copy.
 */

export const END_OF_MESSAGE = "]]>]]>";
const EOM = Buffer.from(END_OF_MESSAGE);

export type Framing = "1.0" | "1.1";

/** A message as it goes on the wire in the given framing. */
export function frame(message: string, framing: Framing): Buffer {
  const body = Buffer.from(message, "utf8");
  if (framing === "1.0") return Buffer.concat([body, EOM]);
  return Buffer.concat([Buffer.from(`\n#${body.length}\n`), body, Buffer.from("\n##\n")]);
}

/** A framing the peer broke: the session cannot continue. */
export class FramingError extends Error {}

/** Largest chunk size RFC 6242 allows. */
const MAX_CHUNK = 4294967295;
/** A chunk header is "\n#" and at most ten digits and "\n": anything longer is not one. */
const MAX_HEADER = 13;

/**
 * Cuts a byte stream into messages, handing each to `onMessage` as it completes; `pending` says how many bytes of
 * an unfinished message are held (for the size limit and for "dropped mid-message" reports). `onMessage` may
 * change `framing` (after the hellos): the bytes after that message are read in the new framing, even when they
 * came in the same packet.
 */
export class MessageDecoder {
  private parts: Buffer[] = [];
  private held = 0;
  framing: Framing = "1.0";
  // base:1.1 state: reading a header (its bytes so far), or the bytes left of the current chunk.
  private header = "";
  private chunkLeft = 0;

  constructor(
    private readonly maxMessageBytes: number,
    private readonly onMessage: (message: string) => void,
  ) {}

  get pending(): number {
    return this.held + this.header.length;
  }

  push(data: Buffer): void {
    if (this.framing === "1.0") this.pushEom(data);
    else this.pushChunked(data);
  }

  private keep(bytes: Buffer): void {
    if (!bytes.length) return;
    this.parts.push(bytes);
    this.held += bytes.length;
    if (this.held > this.maxMessageBytes) {
      throw new FramingError(
        `a NETCONF message exceeded ${Math.round(this.maxMessageBytes / 1048576)} MB (the output limit)`,
      );
    }
  }

  private take(): string {
    const text = Buffer.concat(this.parts, this.held).toString("utf8");
    this.parts = [];
    this.held = 0;
    return text;
  }

  private pushEom(data: Buffer): void {
    let rest = data;
    while (rest.length) {
      // The marker may straddle packets: look from up to five held bytes back.
      const before = this.heldTail(EOM.length - 1);
      const tail = before.length ? Buffer.concat([before, rest]) : rest;
      const at = tail.indexOf(EOM);
      if (at < 0) {
        this.keep(rest);
        break;
      }
      if (at < before.length) this.dropHeld(before.length - at);
      else this.keep(rest.subarray(0, at - before.length));
      rest = rest.subarray(at - before.length + EOM.length);
      this.onMessage(this.take());
      if (this.framing !== "1.0") return this.pushChunked(rest);
    }
  }

  /** The last `n` bytes held (fewer when fewer are). */
  private heldTail(n: number): Buffer {
    const picked: Buffer[] = [];
    let got = 0;
    for (let i = this.parts.length - 1; i >= 0 && got < n; i--) {
      const part = this.parts[i]!;
      const piece = part.subarray(Math.max(0, part.length - (n - got)));
      picked.unshift(piece);
      got += piece.length;
    }
    return picked.length === 1 ? picked[0]! : Buffer.concat(picked);
  }

  private dropHeld(n: number): void {
    let left = n;
    while (left > 0) {
      const last = this.parts.pop()!;
      if (last.length > left) {
        this.parts.push(last.subarray(0, last.length - left));
        this.held -= left;
        left = 0;
      } else {
        this.held -= last.length;
        left -= last.length;
      }
    }
  }

  private pushChunked(data: Buffer): void {
    let i = 0;
    while (i < data.length) {
      if (this.chunkLeft > 0) {
        const n = Math.min(this.chunkLeft, data.length - i);
        this.keep(data.subarray(i, i + n));
        this.chunkLeft -= n;
        i += n;
        continue;
      }
      // A header: "\n#<digits>\n" (a chunk) or "\n##\n" (end of message).
      const nl = this.header.length >= 2 ? data.indexOf(0x0a, i) : -1;
      if (this.header.length < 2) {
        this.header += String.fromCharCode(data[i]!);
        i++;
        if ((this.header.length === 1 && this.header !== "\n") || (this.header.length === 2 && this.header !== "\n#")) {
          throw new FramingError(
            `bad NETCONF 1.1 chunk header ${JSON.stringify(this.header)}: the device does not frame its messages as it said`,
          );
        }
        continue;
      }
      const end = nl < 0 ? data.length : nl + 1;
      this.header += data.subarray(i, end).toString("latin1");
      i = end;
      if (this.header.length > MAX_HEADER) throw new FramingError("bad NETCONF 1.1 chunk header: too long");
      if (nl < 0) continue;
      const header = this.header;
      this.header = "";
      if (header === "\n##\n") {
        this.onMessage(this.take());
        continue;
      }
      const size = /^\n#([1-9]\d*)\n$/.exec(header);
      if (!size || Number(size[1]) > MAX_CHUNK)
        throw new FramingError(`bad NETCONF 1.1 chunk header ${JSON.stringify(header)}`);
      this.chunkLeft = Number(size[1]);
    }
  }
}

import { connect, type Socket } from "node:net";
import { SessionError, type Channel } from "../session.ts";

export type TelnetTarget = { host: string; port: number; connectTimeoutMs: number };

// RFC 854 commands and the options this client knows (RFC 856 TRANSMIT-BINARY, 857 ECHO, 858 SUPPRESS-GO-AHEAD,
// 1091 TERMINAL-TYPE, 1073 NAWS).
const IAC = 255,
  DONT = 254,
  DO = 253,
  WONT = 252,
  WILL = 251,
  SB = 250,
  SE = 240;
const CR = 13,
  LF = 10,
  NUL = 0;
const BINARY = 0,
  ECHO = 1,
  SGA = 3,
  TTYPE = 24,
  NAWS = 31;
const TTYPE_IS = 0,
  TTYPE_SEND = 1;

/** Options the server may turn on at its end: it echoes what we type, sends no go-ahead, and may send raw 8-bit. */
const SERVER_MAY = new Set([ECHO, SGA, BINARY]);
/**
 * Options we turn on at our end when the server asks: no go-ahead, a terminal type, a window size. Not BINARY:
 * in binary mode a server passes CR LF through as two Enters (GNU inetutils telnetd does), so what we send stays
 * NVT text. A 7-bit server may then strip the high bit of what we type (inetutils does), which only matters for
 * non-ASCII commands; what the device sends is read as UTF-8 either way.
 */
const CLIENT_WILL = new Set([SGA, TTYPE, NAWS]);

/** The terminal we claim to be: the same as the SSH transport's, wide so devices do not wrap configuration lines. */
export const TERMINAL = { type: "VT100", cols: 511, rows: 24 };

type State = "data" | "iac" | "option" | "sb" | "sb-iac";
/** Longer subnegotiations are not ours to answer (TTYPE SEND is 2 bytes); their bytes are dropped, not kept. */
const MAX_SUBNEGOTIATION = 256;

/**
 * The Telnet protocol (RFC 854/855) over a byte stream: takes what the server sent, answers its option
 * negotiation, and returns the data bytes alone. State carries over between chunks, so a command split across
 * TCP segments is read whole. Replies follow RFC 854's loop rule: a request for a state an option is already in
 * is not answered.
 */
export class TelnetProtocol {
  private state: State = "data";
  private verb = 0;
  private sub: number[] = [];
  /** Options the server has on at its end (WILL acknowledged by our DO), and those we have on at ours. */
  private readonly server = new Set<number>();
  private readonly client = new Set<number>();

  constructor(private readonly reply: (bytes: Uint8Array) => void) {}

  /** The data bytes in a chunk from the server, with every Telnet command removed and answered. */
  receive(chunk: Uint8Array): Uint8Array {
    const data: number[] = [];
    for (const byte of chunk) {
      switch (this.state) {
        case "data":
          if (byte === IAC) this.state = "iac";
          // NUL is a no-op for an NVT: it follows a bare CR and carries nothing.
          else if (byte !== NUL) data.push(byte);
          break;
        case "iac":
          if (byte === IAC) {
            data.push(IAC);
            this.state = "data";
          } else if (byte === WILL || byte === WONT || byte === DO || byte === DONT) {
            this.verb = byte;
            this.state = "option";
          } else if (byte === SB) {
            this.sub = [];
            this.state = "sb";
          } else this.state = "data"; // GA, NOP, DM, AYT, ...: nothing to show or answer
          break;
        case "option":
          this.negotiate(this.verb, byte);
          this.state = "data";
          break;
        case "sb":
          if (byte === IAC) this.state = "sb-iac";
          else if (this.sub.length < MAX_SUBNEGOTIATION) this.sub.push(byte);
          break;
        case "sb-iac":
          if (byte === SE) {
            this.subnegotiation(this.sub);
            this.state = "data";
          } else {
            // IAC IAC inside a subnegotiation is a literal 255; anything else is a broken server, read on.
            if (byte === IAC) this.sub.push(IAC);
            this.state = "sb";
          }
          break;
      }
    }
    return Uint8Array.from(data);
  }

  private send(...bytes: number[]): void {
    this.reply(Uint8Array.from(bytes));
  }

  private negotiate(verb: number, option: number): void {
    if (verb === WILL) {
      if (!SERVER_MAY.has(option)) return this.send(IAC, DONT, option);
      if (this.server.has(option)) return;
      this.server.add(option);
      this.send(IAC, DO, option);
    } else if (verb === WONT) {
      if (this.server.delete(option)) this.send(IAC, DONT, option);
    } else if (verb === DO) {
      if (!CLIENT_WILL.has(option)) return this.send(IAC, WONT, option);
      if (this.client.has(option)) return;
      this.client.add(option);
      this.send(IAC, WILL, option);
      if (option === NAWS) this.sendWindowSize();
    } else if (verb === DONT) {
      if (this.client.delete(option)) this.send(IAC, WONT, option);
    }
  }

  private subnegotiation([option, ...rest]: number[]): void {
    if (option === TTYPE && rest[0] === TTYPE_SEND && this.client.has(TTYPE)) {
      this.sendSubnegotiation(TTYPE, [TTYPE_IS, ...new TextEncoder().encode(TERMINAL.type)]);
    }
  }

  private sendWindowSize(): void {
    const { cols, rows } = TERMINAL;
    this.sendSubnegotiation(NAWS, [cols >> 8, cols & 0xff, rows >> 8, rows & 0xff]);
  }

  private sendSubnegotiation(option: number, payload: number[]): void {
    // 511 columns is 0x01 0xFF: a 255 in the payload is doubled like anywhere else.
    this.send(IAC, SB, option, ...payload.flatMap((b) => (b === IAC ? [IAC, IAC] : [b])), IAC, SE);
  }
}

/**
 * Text as a Telnet client sends it (RFC 854): UTF-8, with every line end as the NVT end of line CR LF, whether
 * the template's line_ending is "\n" or "\r\n"; a CR alone (a pager answered with Enter) becomes CR NUL. CR LF is
 * one Enter for a server in NVT mode: GNU inetutils telnetd turns CR LF, CR NUL, a bare CR and a bare LF alike
 * into one newline (checked), and network devices expect CR LF or CR; a bare LF, which some ignore, never goes
 * out. UTF-8 never holds a 255 byte, so there is no IAC to double.
 */
export function encodeForTelnet(text: string): Uint8Array {
  const bytes = new TextEncoder().encode(text);
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === CR) {
      const endOfLine = bytes[i + 1] === LF;
      if (endOfLine) i++;
      out.push(CR, endOfLine ? LF : NUL);
    } else if (b === LF) out.push(CR, LF);
    else out.push(b);
  }
  return Uint8Array.from(out);
}

// Errors that mean nothing answers at that address; the connect timer covers the silent ones.
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ECONNRESET",
  "EADDRNOTAVAIL",
]);

/** Opens a Telnet connection and answers option negotiation; the login happens in the session (prompts). */
export function openTelnet(target: TelnetTarget): Promise<Channel & { close(): void }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.host, port: target.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new SessionError(
          "timeout",
          `no TCP connection to ${target.host}:${target.port} within ${target.connectTimeoutMs / 1000} s`,
        ),
      );
    }, target.connectTimeoutMs);
    const failed = (err: Error & { code?: string }) => {
      clearTimeout(timer);
      socket.destroy();
      reject(
        err.code && UNREACHABLE.has(err.code)
          ? new SessionError("unreachable", `cannot reach ${target.host}:${target.port} (${err.code})`)
          : new SessionError("error", `Telnet connection to ${target.host}:${target.port} failed: ${err.message}`),
      );
    };
    socket.once("error", failed);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.off("error", failed);
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 15_000);
      resolve(channelOf(socket));
    });
  });
}

/**
 * The Telnet channel on a connected socket. Negotiation is answered from the first byte on; text that arrives
 * before the session listens is kept for it, and so is an early close.
 */
function channelOf(socket: Socket): Channel & { close(): void } {
  const protocol = new TelnetProtocol((bytes) => void (socket.writable && socket.write(bytes)));
  // One decoder for the whole stream: a UTF-8 character split across chunks (or by a Telnet command) stays whole.
  const decoder = new TextDecoder();
  let pending = "";
  let dataListener: ((chunk: string) => void) | undefined;
  let closed: { error?: Error } | undefined;
  let closeListener: ((error?: Error) => void) | undefined;
  let lastError: Error | undefined;

  socket.on("data", (chunk: Buffer) => {
    const text = decoder.decode(protocol.receive(chunk), { stream: true });
    if (!text) return;
    if (dataListener) dataListener(text);
    else pending += text;
  });
  socket.on("error", (err) => (lastError = err));
  socket.on("close", () => {
    closed = { error: lastError };
    closeListener?.(lastError);
  });

  return {
    write: (data) => void (socket.writable && socket.write(encodeForTelnet(data))),
    onData: (listener) => {
      dataListener = listener;
      if (pending) {
        const text = pending;
        pending = "";
        listener(text);
      }
    },
    onClose: (listener) => {
      closeListener = listener;
      if (closed) listener(closed.error);
    },
    close: () => {
      // end() lets the teardown lines (exit) go out first; destroy() if the server never closes its side.
      socket.end();
      setTimeout(() => socket.destroy(), 2_000).unref();
    },
  };
}

import { describeRpcError, rpcErrorsOf, NetconfReplyError } from "../../src/modules/templates/index.ts";
import { SessionError } from "../session.ts";
import type { Transcript } from "../transcript.ts";
import { frame, FramingError, MessageDecoder, type Framing } from "./framing.ts";

/**
 * A NETCONF client session (RFC 6241) over an SSH `netconf` subsystem channel (RFC 6242): the hello exchange, then
 * one RPC at a time. Only what a backup needs: `<get-config>` of the running datastore and `<close-session>`.
 */

export const BASE_1_0 = "urn:ietf:params:netconf:base:1.0";
export const BASE_1_1 = "urn:ietf:params:netconf:base:1.1";
const NS = "urn:ietf:params:xml:ns:netconf:base:1.0";

/** A byte stream to the device's NETCONF server: an SSH subsystem channel. */
export interface ByteChannel {
  write(data: Buffer): void;
  onData(listener: (chunk: Buffer) => void): void;
  onClose(listener: () => void): void;
  close(): void;
}

export type NetconfLimits = {
  /** Longest silence allowed while a message is awaited. */
  idleTimeoutMs: number;
  /** Largest message accepted. */
  maxMessageBytes: number;
};

/** How long `<close-session>` may take to be answered before the channel is closed anyway. */
const CLOSE_WAIT_MS = 2000;

const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export class NetconfClient {
  /** The server's capabilities, as its hello listed them. */
  capabilities: string[] = [];
  sessionId: string | undefined;
  private readonly decoder: MessageDecoder;
  private waiter:
    | {
        resolve(message: string): void;
        reject(error: Error): void;
        what: string;
        idleTimeoutMs: number;
        timer?: ReturnType<typeof setTimeout>;
      }
    | undefined;
  private received: string[] = [];
  private closed: Error | undefined;
  private nextId = 1;

  private constructor(
    private readonly channel: ByteChannel,
    private readonly limits: NetconfLimits,
    private readonly transcript?: Transcript,
  ) {
    this.decoder = new MessageDecoder(limits.maxMessageBytes, (message) => this.received.push(message));
    channel.onData((chunk) => {
      if (this.closed) return;
      try {
        this.decoder.push(chunk);
      } catch (err) {
        this.fail(new SessionError("error", err instanceof FramingError ? err.message : String(err)));
        channel.close();
        return;
      }
      this.deliver();
      if (this.waiter) this.arm();
    });
    channel.onClose(() => {
      const pending = this.decoder.pending;
      this.fail(
        new SessionError(
          "error",
          pending
            ? `the device closed the NETCONF session in the middle of a message (${pending} bytes of it received); nothing of it is stored`
            : "the device closed the NETCONF session",
        ),
      );
    });
  }

  /** Opens the session: both hellos, and the framing they agree on (base:1.1 chunks when both name it). */
  static async open(channel: ByteChannel, limits: NetconfLimits, transcript?: Transcript): Promise<NetconfClient> {
    const client = new NetconfClient(channel, limits, transcript);
    const hello = `<?xml version="1.0" encoding="UTF-8"?><hello xmlns="${NS}"><capabilities><capability>${BASE_1_0}</capability><capability>${BASE_1_1}</capability></capabilities></hello>`;
    client.send(hello, "1.0");
    const theirs = await client.next("the server's <hello>");
    const capabilities = [
      ...theirs.matchAll(/<(?:[\w.-]+:)?capability>\s*([^<]*?)\s*<\/(?:[\w.-]+:)?capability>/g),
    ].map((m) => m[1]!);
    if (!/<(?:[\w.-]+:)?hello\b/.test(theirs) || !capabilities.length) {
      channel.close();
      throw new SessionError(
        "error",
        `the device's first NETCONF message is no <hello> with capabilities: ${theirs.slice(0, 200)}`,
      );
    }
    client.capabilities = capabilities;
    client.sessionId = /<(?:[\w.-]+:)?session-id>\s*(\d+)\s*</.exec(theirs)?.[1];
    if (!capabilities.some((c) => c.startsWith(BASE_1_0) || c.startsWith(BASE_1_1))) {
      channel.close();
      throw new SessionError("error", "the device's NETCONF <hello> names neither base:1.0 nor base:1.1");
    }
    if (capabilities.some((c) => c.startsWith(BASE_1_1))) client.decoder.framing = "1.1";
    client.transcript?.received(
      `<hello> session ${client.sessionId ?? "?"}, framing base:${client.decoder.framing}, capabilities: ${capabilities.join(" ")}\n`,
    );
    return client;
  }

  get framing(): Framing {
    return this.decoder.framing;
  }

  /** Whether the server named a capability (its URI without parameters). */
  has(capability: string): boolean {
    return this.capabilities.some((c) => c === capability || c.startsWith(`${capability}?`));
  }

  /**
   * `<get-config>` of the running datastore, with a subtree filter when given. Returns the whole `<rpc-reply>`
   * (parsed where it is stored). An answer with an rpc-error of severity error fails as a SessionError in words.
   */
  async getConfig(filter?: string): Promise<string> {
    const body = `<get-config><source><running/></source>${filter ? `<filter type="subtree">${filter}</filter>` : ""}</get-config>`;
    return this.rpc("get-config", body);
  }

  /** `<close-session>`, waiting briefly for its `<ok/>`; the channel is closed either way. */
  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.rpc("close-session", "<close-session/>", CLOSE_WAIT_MS);
    } catch {
      // A device that hangs up at once instead of answering has closed the session all the same.
    } finally {
      this.channel.close();
    }
  }

  /**
   * Any RPC: `body` is the operation element. Returns the whole `<rpc-reply>`; an rpc-error of severity error
   * throws a SessionError whose message is the device's words.
   */
  async rpc(operation: string, body: string, idleTimeoutMs = this.limits.idleTimeoutMs): Promise<string> {
    const id = String(this.nextId++);
    this.transcript?.sent(`<rpc message-id="${id}"> ${body.length > 300 ? `<${operation}> ...` : body}`);
    this.send(
      `<?xml version="1.0" encoding="UTF-8"?><rpc message-id="${id}" xmlns="${NS}">${body}</rpc>`,
      this.decoder.framing,
    );
    const reply = await this.next(`the answer to <${operation}>`, idleTimeoutMs);
    const head = reply.slice(0, 2048);
    const replyId = /<(?:[\w.-]+:)?rpc-reply\b[^>]*?\smessage-id=["']([^"']*)["']/.exec(head)?.[1];
    if (!/<(?:[\w.-]+:)?rpc-reply\b/.test(head))
      throw new SessionError(
        "error",
        `the device answered <${operation}> with something other than an <rpc-reply>: ${escapeXml(head.slice(0, 200))}`,
      );
    if (replyId !== undefined && replyId !== id)
      throw new SessionError("error", `the device answered message ${replyId} where ${id} (<${operation}>) was asked`);
    // A configuration may hold the words; only then is the whole answer read for errors.
    if (reply.includes("rpc-error")) {
      let errors;
      try {
        errors = rpcErrorsOf(reply).filter((e) => e.severity !== "warning");
      } catch (err) {
        throw new SessionError("output_invalid", err instanceof NetconfReplyError ? err.message : String(err));
      }
      if (errors.length) {
        this.transcript?.received(`${reply.slice(0, 4096)}\n`);
        const said = errors.map(describeRpcError).join("; ");
        throw new SessionError("error", `the device refused <${operation}>: ${said}`.slice(0, 1000));
      }
    }
    this.transcript?.received(`<rpc-reply message-id="${id}"> ${reply.length} characters\n`);
    return reply;
  }

  private send(message: string, framing: Framing): void {
    this.channel.write(frame(message, framing));
  }

  /** The next message, or a SessionError after the silence limit or when the session ends. */
  private next(what: string, idleTimeoutMs = this.limits.idleTimeoutMs): Promise<string> {
    if (this.waiter) throw new Error("NetconfClient: one message at a time");
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject, what, idleTimeoutMs };
      this.deliver();
      if (!this.waiter) return;
      if (this.closed) return this.fail(this.closed);
      this.arm();
    });
  }

  private arm(): void {
    const waiter = this.waiter!;
    const { idleTimeoutMs } = waiter;
    clearTimeout(waiter.timer);
    waiter.timer = setTimeout(() => {
      const got = this.decoder.pending;
      this.fail(
        new SessionError(
          "timeout",
          `no NETCONF message for ${idleTimeoutMs / 1000} s while waiting for ${waiter.what}${got ? ` (${got} bytes of it received)` : ""}`,
        ),
      );
      this.channel.close();
    }, idleTimeoutMs);
  }

  private deliver(): void {
    const waiter = this.waiter;
    if (!waiter || !this.received.length) return;
    this.waiter = undefined;
    clearTimeout(waiter.timer);
    waiter.resolve(this.received.shift()!);
  }

  private fail(error: Error): void {
    this.closed ??= error;
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = undefined;
    clearTimeout(waiter.timer);
    waiter.reject(error);
  }
}

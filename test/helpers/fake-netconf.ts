import type { ServerChannel } from "ssh2";
import { frame, MessageDecoder, type Framing } from "../../collector/netconf/framing.ts";

/**
 * The NETCONF server side of the fake device (test/helpers/fake-device.ts): the SSH `netconf` subsystem speaking
 * RFC 6241/6242 as far as a backup needs: hellos, base:1.0 end-of-message or base:1.1 chunked framing,
 * `<get-config>` (answered with `config` inside `<data>`), `<close-session>`, and an rpc-error for anything else.
 * Checked against an independent client (Debian's python3-ncclient) in test/collector/netconf.test.ts.
 */

export type FakeNetconfOptions = {
  /** What `<data>` holds: the device's running configuration as XML. */
  config: string;
  /** Offer base:1.1 (chunked framing, used when the client offers it too). Default true. */
  base11?: boolean;
  /** More capabilities for the hello (`urn:ietf:params:netconf:capability:candidate:1.0`, YANG modules). */
  capabilities?: string[];
  /** Answer `<get-config>` with this rpc-error instead of the configuration. */
  rpcError?: { tag: string; message: string; path?: string };
  /** Answer `<get-config>` with this many bytes of generated interface configuration instead (streamed). */
  hugeConfigBytes?: number;
  /** The hello's session-id. */
  sessionId?: number;
  /**
   * A candidate datastore (`:candidate`, `:validate:1.1`, `:confirmed-commit:1.1` offered): lock, unlock,
   * edit-config, validate, commit and discard-changes work on it; a commit appends the edits to what get-config
   * answers. `refuse` answers that operation with an rpc-error.
   */
  candidate?: { refuse?: "edit-config" | "validate" | "commit" | "lock" };
};

const NS = "urn:ietf:params:xml:ns:netconf:base:1.0";
const BASE_1_0 = "urn:ietf:params:netconf:base:1.0";
const BASE_1_1 = "urn:ietf:params:netconf:base:1.1";

export type NetconfServerIo = {
  /** Sends bytes through the device's faults (stall, drop); false once the connection stopped answering. */
  send(channel: ServerChannel, data: string | Buffer): Promise<boolean>;
  /** Records what the client asked: `<netconf> hello`, `<netconf> get-config <filter...>`, `<netconf> close-session`. */
  received(what: string): void;
  /** Ends the whole SSH connection (after close-session). */
  end(): void;
};

/** Serves one `netconf` subsystem channel until the client closes the session or goes away. */
export function serveNetconf(channel: ServerChannel, options: FakeNetconfOptions, io: NetconfServerIo): void {
  channel.on("error", () => {});
  const offered = options.base11 === false ? [BASE_1_0] : [BASE_1_0, BASE_1_1];
  const candidateCaps = options.candidate
    ? [
        "urn:ietf:params:netconf:capability:candidate:1.0",
        "urn:ietf:params:netconf:capability:validate:1.1",
        "urn:ietf:params:netconf:capability:confirmed-commit:1.1",
      ]
    : [];
  /** Edits in the candidate, not yet committed. */
  let edits: string[] = [];
  const capabilities = [...offered, ...candidateCaps, ...(options.capabilities ?? [])]
    .map((c) => `<capability>${c}</capability>`)
    .join("");
  let framing: Framing = "1.0";
  let helloSeen = false;
  let queue = Promise.resolve(true);
  let decoded = 0;
  const decoder = new MessageDecoder(64 * 1024 * 1024, (message) => {
    // The framing changes right after the hellos, before the next byte is read (RFC 6242 section 4.1).
    if (
      decoded++ === 0 &&
      /<(?:[\w.-]+:)?capability>\s*urn:ietf:params:netconf:base:1\.1\s*</.test(message) &&
      offered.includes(BASE_1_1)
    )
      decoder.framing = "1.1";
    queue = queue.then((open) => (open ? answer(message) : false));
  });

  void io.send(
    channel,
    frame(
      `<?xml version="1.0" encoding="UTF-8"?>\n<hello xmlns="${NS}"><capabilities>${capabilities}</capabilities><session-id>${options.sessionId ?? 4242}</session-id></hello>`,
      "1.0",
    ),
  );

  const answer = async (message: string): Promise<boolean> => {
    if (!helloSeen) {
      helloSeen = true;
      io.received("<netconf> hello");
      framing = decoder.framing;
      return true;
    }
    const rpc = /<(?:[\w.-]+:)?rpc\b([^>]*)>\s*<(?:[\w.-]+:)?([\w-]+)/.exec(message);
    if (!rpc) {
      io.received(`<netconf> not an rpc: ${message.slice(0, 100)}`);
      return true;
    }
    // RFC 6241: the reply carries the rpc's attributes (its message-id above all) unchanged.
    const attributes = rpc[1]!.replace(/\s+xmlns(?::[\w.-]+)?=(?:"[^"]*"|'[^']*')/g, "");
    const operation = rpc[2]!;
    const filter = /<(?:[\w.-]+:)?filter\b[^>]*>([\s\S]*)<\/(?:[\w.-]+:)?filter>/.exec(message)?.[1];
    const confirmed = /<(?:[\w.-]+:)?confirmed\/>[\s\S]*?<(?:[\w.-]+:)?confirm-timeout>(\d+)</.exec(message)?.[1];
    io.received(`<netconf> ${operation}${filter ? ` ${filter}` : ""}${confirmed ? ` confirmed ${confirmed} s` : ""}`);
    const reply = (body: string) => `<rpc-reply xmlns="${NS}"${attributes}>${body}</rpc-reply>`;
    if (operation === "close-session") {
      await io.send(channel, frame(reply("<ok/>"), framing));
      channel.end();
      io.end();
      return false;
    }
    if (
      options.candidate &&
      ["lock", "unlock", "edit-config", "validate", "commit", "discard-changes"].includes(operation)
    ) {
      if (options.candidate.refuse === operation) {
        return io.send(
          channel,
          frame(
            reply(
              rpcError(
                "invalid-value",
                `the fake device refuses <${operation}>: syntax error at 'bogus'`,
                "/config/bogus",
              ),
            ),
            framing,
          ),
        );
      }
      if (operation === "edit-config")
        edits.push(/<(?:[\w.-]+:)?config>([\s\S]*)<\/(?:[\w.-]+:)?config>/.exec(message)?.[1] ?? "");
      if (operation === "discard-changes") edits = [];
      // The confirming commit (no <confirmed/>) finds nothing new to apply.
      if (operation === "commit") {
        options.config += edits.join("");
        edits = [];
      }
      return io.send(channel, frame(reply("<ok/>"), framing));
    }
    if (operation !== "get-config") {
      return io.send(
        channel,
        frame(reply(rpcError("operation-not-supported", `the fake device does not know <${operation}>`)), framing),
      );
    }
    if (options.rpcError) {
      const { tag, message: text, path } = options.rpcError;
      return io.send(channel, frame(reply(rpcError(tag, text, path)), framing));
    }
    if (options.hugeConfigBytes !== undefined) return sendHuge(channel, options.hugeConfigBytes, framing, reply, io);
    return io.send(channel, frame(reply(`<data>${options.config}</data>`), framing));
  };

  channel.on("data", (chunk: Buffer) => {
    try {
      decoder.push(chunk);
    } catch (err) {
      io.received(`<netconf> framing error: ${err instanceof Error ? err.message : String(err)}`);
      channel.end();
    }
  });
}

function rpcError(tag: string, text: string, path?: string): string {
  const message = text.replace(/&/g, "&amp;").replace(/</g, "&lt;");
  return `<rpc-error><error-type>application</error-type><error-tag>${tag}</error-tag><error-severity>error</error-severity>${
    path ? `<error-path>${path}</error-path>` : ""
  }<error-message xml:lang="en">${message}</error-message></rpc-error>`;
}

/** About `total` bytes of interface configuration, in blocks: in 1.1 framing each block is a chunk of its own. */
async function sendHuge(
  channel: ServerChannel,
  total: number,
  framing: Framing,
  reply: (body: string) => string,
  io: NetconfServerIo,
): Promise<boolean> {
  const [head, tail] = reply("\u0000").split("\u0000") as [string, string];
  const open = `${head}<data><configuration xmlns="http://xml.juniper.net/xnm/1.1/xnm"><interfaces>`;
  const close = `</interfaces></configuration></data>${tail}`;
  const piece = (text: string) =>
    framing === "1.1" ? Buffer.from(`\n#${Buffer.byteLength(text)}\n${text}`) : Buffer.from(text);
  if (!(await io.send(channel, piece(open)))) return false;
  let sent = 0;
  let port = 0;
  while (sent < total) {
    let block = "";
    while (block.length < 256 * 1024 && sent + block.length < total) {
      block += `<interface><name>ge-0/0/${port}</name><description>port ${port} to floor ${port % 40}</description><unit><name>0</name><family><inet><address><name>10.${(port >> 16) & 255}.${(port >> 8) & 255}.${port & 255}/31</name></address></inet></family></unit></interface>`;
      port++;
    }
    sent += block.length;
    if (!(await io.send(channel, piece(block)))) return false;
  }
  return io.send(
    channel,
    framing === "1.1"
      ? Buffer.concat([piece(close), Buffer.from("\n##\n")])
      : Buffer.concat([Buffer.from(close), Buffer.from("]]>]]>")]),
  );
}

import { createHash } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server as NetServer, type Socket } from "node:net";
import { StringDecoder } from "node:string_decoder";
import ssh2, {
  type AuthContext,
  type AuthenticationType,
  type Connection,
  type ParsedKey,
  type ServerChannel,
  type Session,
} from "ssh2";
import { recordedMode, stripTerminator, type Simulation, type SimulationEntry } from "./simulation.ts";
import { serveNetconf, type FakeNetconfOptions } from "./fake-netconf.ts";

/**
 * A fake network device: an SSH server on 127.0.0.1 that replays a recorded session (simulation.yaml) or answers
 * from a script, with faults on demand. Anything the client sends that the recording lacks is kept in `unexpected`
 * and answered with a CLI error plus the prompt, so a test fails loudly instead of hanging.
 */

export type FakeDeviceAuth = {
  username: string;
  password?: string;
  /** OpenSSH public key text ("ssh-ed25519 AAAA... comment"): that key is accepted. */
  publicKey?: string;
  /** Ask for the password through keyboard-interactive; the password method is then refused. */
  keyboardInteractive?: boolean;
};

export type FakeDeviceFaults = {
  /** Send the login banner without its final prompt line, then nothing at all. */
  neverPrompt?: true;
  /** After this many answer bytes (counted across answers from the first one on, login banner excluded), go silent. */
  stallAfterBytes?: number;
  /** After this many answer bytes (same count), close the TCP connection without an SSH goodbye. */
  dropAfterBytes?: number;
  /** Answer the configuration command with this many bytes of plausible config lines (streamed), then the prompt. */
  hugeOutputBytes?: number;
  rejectAuth?: true;
};

/** A scripted device's answer: the bytes to send (echo, output and next prompt, as a recording holds them). */
export type ScriptAnswer =
  | string
  | { answer: string /** end the session after this answer (exit) */; close?: boolean }
  | undefined;

export type FakeDeviceOptions = {
  /** A decoded recording (loadSimulation); or `script` for a synthetic device. */
  simulation?: Simulation;
  /**
   * Called with each line the client sends, terminator removed, and how it came (a shell line, or an exec
   * channel's command, whose answer is its output alone); undefined means "not a command this device knows".
   */
  script?: (line: string, via: "shell" | "exec") => ScriptAnswer;
  /** Login banner and first prompt of a scripted device (a simulation brings its own). */
  initPrompt?: string;
  /** Single keypresses answered on arrival, without a line terminator (pager keys). Default: the recording's one-character keys. */
  keys?: string[];
  auth: FakeDeviceAuth;
  /** Loopback address to listen on (any of 127.0.0.0/8). Default: 127.0.0.1. */
  host?: string;
  /** Loopback port to listen on. Default: a free one. A new instance on an old one's port is the same device after a reboot. */
  port?: number;
  /** Private key (OpenSSH or PEM text). Default: a fresh ed25519 key per device, so a new instance is a changed host key. */
  hostKey?: string;
  /** Default: what the recording shows (answers that echo their command are a shell), "shell" for a script; "both" (scripts only) takes either. */
  mode?: "shell" | "exec" | "both";
  /** The command whose answer hugeOutputBytes replaces, without terminator. Default: the recording's configuration command. */
  configCommand?: string;
  /** Delay before each answer. */
  latencyMs?: number;
  /** Send answers in pieces of this many bytes (exercises prompt detection on the tail of a split stream). */
  chunkSize?: number;
  faults?: FakeDeviceFaults;
  /**
   * Files the device serves over SCP (`scp -f <path>` on an exec channel, in any mode), by path; a simulation's
   * `files` are used when this is left out. A path it lacks is refused as OpenSSH's scp refuses it.
   */
  files?: Record<string, string>;
  /**
   * Serve the SSH `netconf` subsystem (test/helpers/fake-netconf.ts). A device with neither `simulation` nor
   * `script` is NETCONF only: it refuses a shell and exec channels, as devices whose policy allows nothing else do.
   */
  netconf?: FakeNetconfOptions;
};

export type FakeDevice = {
  host: string;
  port: number;
  /** OpenSSH notation: "SHA256:" + base64 of the SHA-256 of the key blob, no padding. */
  hostKeyFingerprint: string;
  /** What the client sent, in order and as sent: shell lines with their terminator, pager keys alone, exec commands as requested. */
  received: string[];
  /** What the client sent that the recording lacks (also in `received`); a test asserts this is empty. */
  unexpected: string[];
  /** Logins that succeeded. */
  readonly sessions: number;
  /** The most logged-in connections this device had open at one moment. */
  readonly maxConcurrentSessions: number;
  close(): Promise<void>;
};

// Node's CommonJS export detection misses ssh2's Server and utils (vitest papers over it, plain tsx does not).
const { Server: SshServer, utils } = ssh2;

const HOST = "127.0.0.1";
const EXIT_COMMANDS = /^\s*(?:exit|quit|logout)\s*$/;
/** A lone "\r" may be followed by "\n" in the next packet: wait this long before deciding it ended the line. */
const CR_GRACE_MS = 30;
/** A client that never sends a terminator does not get to grow the buffer without bound. */
const MAX_LINE = 16 * 1024;

/** "SHA256:..." for an SSH public key blob, as OpenSSH prints it. */
export function fingerprintOf(keyBlob: Buffer): string {
  return "SHA256:" + createHash("sha256").update(keyBlob).digest("base64").replace(/=+$/, "");
}

/** A fresh ed25519 key pair in OpenSSH format (cheap enough for a thousand devices); also fits as a client key. */
export function generateHostKey(): { privateKey: string; publicKey: string } {
  // ssh2 strips leading zero bytes from the public key, so about 1 pair in 256 is unreadable
  // (mscdex/ssh2#1390, #1513): draw again until both halves parse.
  for (;;) {
    const pair = utils.generateKeyPairSync("ed25519");
    if (!(utils.parseKey(pair.private) instanceof Error) && !(utils.parseKey(pair.public) instanceof Error)) {
      return { privateKey: pair.private, publicKey: pair.public };
    }
  }
}

function parseOneKey(text: string, what: string): ParsedKey {
  const parsed = utils.parseKey(text);
  if (parsed instanceof Error) throw new Error(`${what}: ${parsed.message}`);
  return Array.isArray(parsed) ? parsed[0]! : parsed;
}

/** Starts one fake device on its own loopback port. */
export async function startFakeDevice(options: FakeDeviceOptions): Promise<FakeDevice> {
  const device = new Device(options);
  await device.listen();
  return device.handle();
}

/** Starts n devices on distinct loopback ports; if one fails to start, the others are closed. */
export async function startFakeDevices(
  n: number,
  optionsFor: (index: number) => FakeDeviceOptions,
): Promise<FakeDevice[]> {
  const started = await Promise.allSettled(Array.from({ length: n }, (_, i) => startFakeDevice(optionsFor(i))));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    await Promise.all(started.map((r) => (r.status === "fulfilled" ? r.value.close() : undefined)));
    throw failed.reason;
  }
  return started.map((r) => (r as PromiseFulfilledResult<FakeDevice>).value);
}

type Reply = { answer: string; close: boolean; huge?: { echo: string; prompt: string } };

/** What one device knows: shared by all its connections, read-only after construction. */
class Device {
  readonly received: string[] = [];
  readonly unexpected: string[] = [];
  sessions = 0;
  openSessions = 0;
  maxConcurrentSessions = 0;
  readonly mode: "shell" | "exec" | "both";
  readonly keys: Set<string>;
  readonly initPrompt: string;
  readonly configCommand: string | undefined;
  readonly faults: FakeDeviceFaults;
  readonly netconfOnly: boolean;
  private readonly hostKeyFingerprint: string;
  private readonly net: NetServer;
  private readonly ssh: InstanceType<typeof SshServer>;
  private readonly sockets = new Map<number, Socket>();
  private readonly allowedKey: ParsedKey | undefined;

  constructor(readonly options: FakeDeviceOptions) {
    const { simulation, netconf } = options;
    if (simulation && options.script) throw new Error("startFakeDevice takes one of simulation or script");
    if (!simulation && !options.script && !netconf)
      throw new Error("startFakeDevice needs a simulation, a script or netconf");
    /** A NETCONF-only device: no shell or exec at all. */
    this.netconfOnly = !simulation && !options.script;
    this.faults = options.faults ?? {};
    this.mode = options.mode ?? (simulation ? recordedMode(simulation) : "shell");
    if (this.mode === "both" && simulation) throw new Error("mode both is for scripted devices");
    this.initPrompt = simulation ? simulation.initPrompt : (options.initPrompt ?? "");
    this.keys = new Set(
      options.keys ?? simulation?.commands.map((c) => c.line).filter((line) => line.length === 1) ?? [],
    );
    this.configCommand = options.configCommand ?? (simulation ? guessConfigCommand(simulation) : undefined);
    if (this.faults.hugeOutputBytes !== undefined && !this.configCommand)
      throw new Error("hugeOutputBytes needs configCommand for a scripted device");
    this.allowedKey = options.auth.publicKey ? parseOneKey(options.auth.publicKey, "auth.publicKey") : undefined;

    const hostKey = options.hostKey ?? generateHostKey().privateKey;
    this.hostKeyFingerprint = fingerprintOf(parseOneKey(hostKey, "hostKey").getPublicSSH());
    this.ssh = new SshServer({ hostKeys: [hostKey] }, (client, info) => {
      const socket = this.sockets.get(info.port);
      if (socket) new DeviceConnection(this, client, socket);
      else client.end(); // cannot happen: every socket is registered before it is handed to ssh2
    });
    // ssh2 never learns the port: sockets are accepted here and handed over, so close() and faults can reach them.
    this.net = createServer((socket) => {
      const port = socket.remotePort!;
      // Answers are many small writes: without this, Nagle and delayed ACKs add ~40 ms per round trip.
      socket.setNoDelay(true);
      this.sockets.set(port, socket);
      socket.on("close", () => this.sockets.delete(port));
      socket.on("error", () => {});
      this.ssh.injectSocket(socket);
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.net.once("error", reject);
      this.net.listen(this.options.port ?? 0, this.options.host ?? HOST, () => resolve());
    });
  }

  handle(): FakeDevice {
    const device = this;
    return {
      host: this.options.host ?? HOST,
      port: (this.net.address() as { port: number }).port,
      hostKeyFingerprint: this.hostKeyFingerprint,
      received: this.received,
      unexpected: this.unexpected,
      get sessions() {
        return device.sessions;
      },
      get maxConcurrentSessions() {
        return device.maxConcurrentSessions;
      },
      close: () => this.close(),
    };
  }

  private close(): Promise<void> {
    return new Promise((resolve) => {
      this.net.close(() => resolve());
      for (const socket of this.sockets.values()) socket.destroy();
    });
  }

  authenticate(ctx: AuthContext): void {
    const { auth } = this.options;
    const methods: AuthenticationType[] = [];
    if (auth.password !== undefined) methods.push(auth.keyboardInteractive ? "keyboard-interactive" : "password");
    if (this.allowedKey) methods.push("publickey");
    if (this.faults.rejectAuth || ctx.username !== auth.username || !methods.includes(ctx.method))
      return ctx.reject(methods);
    if (ctx.method === "password") return ctx.password === auth.password ? ctx.accept() : ctx.reject(methods);
    if (ctx.method === "keyboard-interactive") {
      return ctx.prompt([{ prompt: "Password: ", echo: false }], (answers) =>
        answers[0] === auth.password ? ctx.accept() : ctx.reject(methods),
      );
    }
    if (ctx.method === "publickey") {
      const key = this.allowedKey!;
      if (!ctx.key.data.equals(key.getPublicSSH())) return ctx.reject(methods);
      // Without a signature the client only asks whether this key would do.
      if (ctx.signature && key.verify(ctx.blob!, ctx.signature, ctx.hashAlgo as never) !== true)
        return ctx.reject(methods);
      return ctx.accept();
    }
    ctx.reject(methods);
  }

  /** The prompt a new shell ends its banner with: the last line of init_prompt. */
  initialPromptLine(): string {
    return this.initPrompt.slice(this.initPrompt.lastIndexOf("\n") + 1);
  }
}

/** One SSH connection: its place in an ordered recording, the byte count faults watch, its channels. */
class DeviceConnection {
  private cursor = 0;
  /** The ordered recording's entries already answered. */
  private readonly used = new Set<number>();
  private answerBytes = 0;
  private silent = false;
  private prompt: string;

  constructor(
    private readonly device: Device,
    private readonly client: Connection,
    private readonly socket: Socket,
  ) {
    this.prompt = device.initialPromptLine();
    client.on("error", () => {});
    client.on("authentication", (ctx) => device.authenticate(ctx));
    client.on("ready", () => {
      device.sessions++;
      device.maxConcurrentSessions = Math.max(device.maxConcurrentSessions, ++device.openSessions);
      client.once("close", () => device.openSessions--);
      client.on("session", (accept) => this.openSession(accept()));
    });
  }

  private openSession(session: Session): void {
    // Without want-reply the client gets no answer, and ssh2 passes no accept/reject: hence the optional calls.
    session.on("pty", (accept) => accept?.());
    session.on("env", (accept) => accept?.());
    session.on("window-change", (accept) => accept?.());
    session.on("subsystem", (accept, reject, info) => {
      const netconf = this.device.options.netconf;
      if (info.name !== "netconf" || !netconf) {
        this.device.unexpected.push(`<subsystem request> ${info.name}`);
        return reject?.();
      }
      serveNetconf(accept(), netconf, {
        send: (channel, data) => this.send(channel, data),
        received: (what) => this.device.received.push(what),
        end: () => this.client.end(),
      });
    });
    session.on("shell", (accept, reject) => {
      if (this.device.netconfOnly) {
        this.device.received.push("<shell request>");
        return reject?.();
      }
      if (this.device.mode === "exec") {
        this.device.unexpected.push("<shell request to an exec-channel device>");
        return reject?.();
      }
      void this.runShell(accept());
    });
    session.on("exec", (accept, reject, info) => {
      this.device.received.push(info.command);
      if (this.device.netconfOnly) return reject?.();
      const scp = /^scp -f (\S+)$/.exec(info.command);
      const files = this.device.options.files ?? this.device.options.simulation?.files;
      if (scp && files) return void this.sendScpFile(accept(), files[scp[1]!], scp[1]!);
      if (this.device.mode === "shell") {
        this.device.unexpected.push(`<exec request to a shell device> ${info.command}`);
        return reject?.();
      }
      void this.runExec(accept(), info.command);
    });
  }

  private async runShell(channel: ServerChannel): Promise<void> {
    const { device } = this;
    channel.on("error", () => {});
    if (device.faults.neverPrompt) {
      this.silent = true;
      await write(
        channel,
        device.initPrompt.slice(0, device.initPrompt.lastIndexOf("\n") + 1),
        device.options.chunkSize,
      );
    } else {
      await write(channel, device.initPrompt, device.options.chunkSize);
    }
    const queue: string[] = [];
    let busy = false;
    const pump = async () => {
      if (busy) return;
      busy = true;
      while (queue.length > 0) {
        const token = queue.shift()!;
        device.received.push(token);
        const ended = await this.answerShell(channel, token);
        if (ended) {
          queue.length = 0;
          break;
        }
      }
      busy = false;
    };
    splitLines(channel, device.keys, (token) => {
      queue.push(token);
      void pump();
    });
  }

  /** Answers one line; true when the session is over (exit, or a fault took the connection). */
  private async answerShell(channel: ServerChannel, token: string): Promise<boolean> {
    const { device } = this;
    const reply = this.lookup(token, "shell");
    if (device.options.latencyMs) await delay(device.options.latencyMs);
    if (!reply) {
      device.unexpected.push(token);
      const echo = device.keys.has(token) ? "" : stripTerminator(token);
      return !(await this.send(
        channel,
        `${echo}\r\n% Unrecognized command recorded by fake device: ${JSON.stringify(token)}\r\n${this.prompt}`,
      ));
    }
    const sent = reply.huge
      ? (await this.send(channel, reply.huge.echo)) &&
        (await this.sendHugeConfig(channel, reply.answer)) &&
        (await this.send(channel, reply.huge.prompt))
      : await this.send(channel, reply.answer);
    if (!sent) return true;
    const answered = reply.huge ? reply.huge.prompt : reply.answer;
    const tail = answered.slice(answered.lastIndexOf("\n") + 1);
    if (tail) this.prompt = tail;
    if (reply.close) {
      channel.exit(0);
      channel.end();
      this.client.end();
      return true;
    }
    return false;
  }

  /**
   * The source side of SCP, as `scp -f` runs it: wait for the sink's zero byte, send `C0644 <size> <name>\n`, wait
   * for its zero byte, send the bytes and a zero byte, wait for the last zero byte, exit 0. A missing file is a
   * `\x02` error line and exit status 1.
   */
  private async sendScpFile(channel: ServerChannel, content: string | undefined, path: string): Promise<void> {
    channel.on("error", () => {});
    if (this.device.faults.neverPrompt) return; // accepted, and never a byte nor an exit status
    let acks = 0;
    let waiting: (() => void) | undefined;
    channel.on("data", (chunk: Buffer) => {
      for (const byte of chunk) {
        if (byte !== 0) this.device.unexpected.push(`<scp sink sent byte ${byte}>`);
        acks++;
      }
      waiting?.();
    });
    const ack = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (acks >= n || channel.destroyed ? resolve() : void (waiting = check));
        check();
      });
    await ack(1);
    if (content === undefined) {
      await write(channel, `\x02scp: ${path}: No such file or directory\n`);
      channel.exit(1);
      return void channel.end();
    }
    const bytes = Buffer.from(content, "utf8");
    if (!(await write(channel, `C0644 ${bytes.length} ${path.slice(path.lastIndexOf("/") + 1)}\n`))) return;
    await ack(2);
    if (!(await write(channel, Buffer.concat([bytes, Buffer.from([0])]), this.device.options.chunkSize))) return;
    await ack(3);
    channel.exit(0);
    channel.end();
  }

  private async runExec(channel: ServerChannel, command: string): Promise<void> {
    const { device } = this;
    channel.on("error", () => {});
    if (device.faults.neverPrompt) return; // accepted, and never a byte nor an exit status
    const reply = this.lookup(command, "exec");
    if (device.options.latencyMs) await delay(device.options.latencyMs);
    if (!reply) {
      device.unexpected.push(command);
      channel.stderr.write(`% Unrecognized command recorded by fake device: ${JSON.stringify(command)}\n`);
      channel.exit(127);
      channel.end();
      return;
    }
    const sent = reply.huge ? await this.sendHugeConfig(channel, reply.answer) : await this.send(channel, reply.answer);
    if (!sent) return;
    channel.exit(0);
    channel.end();
  }

  /** The recorded answer to what the client sent, consuming it if the recording is ordered; undefined if it has none. */
  private lookup(token: string, via: "shell" | "exec"): Reply | undefined {
    const { device } = this;
    const command = via === "exec" ? token : stripTerminator(token);
    const isHuge = device.faults.hugeOutputBytes !== undefined && command === device.configCommand;
    const script = device.options.script;
    if (script) {
      const out = script(command, via);
      if (out === undefined) return undefined;
      const answer = typeof out === "string" ? out : out.answer;
      return {
        answer,
        close: typeof out === "string" ? false : !!out.close,
        huge: isHuge ? this.hugeFrame(command, answer, answer) : undefined,
      };
    }
    const simulation = device.options.simulation!;
    // Shell lines must match exactly, terminator included; an exec request carries the command without one.
    const matches = (line: string) => (device.mode === "exec" ? stripTerminator(line) === token : line === token);
    if (!simulation.ordered) {
      const entry = simulation.commands.find((c) => matches(c.line));
      if (!entry) return undefined;
      return {
        answer: entry.answer,
        close: EXIT_COMMANDS.test(command),
        huge: isHuge ? this.hugeFrame(command, entry.answer, entry.answer) : undefined,
      };
    }
    // In a list, each entry answers once, the next one after the last answered first (pager keys repeat). A device
    // answers its commands in any order, so an entry skipped earlier still answers when asked later (a template
    // that runs the configuration before `show version`, where the recording has them the other way round).
    const commands = simulation.commands;
    const unused = (c: SimulationEntry, i: number) => !this.used.has(i) && matches(c.line);
    let index = commands.findIndex((c, i) => i >= this.cursor && unused(c, i));
    const skipped = index < 0;
    if (skipped) index = commands.findIndex(unused);
    if (index < 0) return undefined;
    const entry = commands[index]!;
    this.used.add(index);
    let last = entry;
    if (isHuge) {
      // The huge answer replaces the whole paged output: the pager keypresses that followed it are consumed too.
      while (index + 1 < commands.length && device.keys.has(commands[index + 1]!.line)) {
        last = commands[++index]!;
        this.used.add(index);
      }
    }
    if (!skipped) this.cursor = index + 1;
    return {
      answer: entry.answer,
      close: index === commands.length - 1,
      huge: isHuge ? this.hugeFrame(command, entry.answer, last.answer) : undefined,
    };
  }

  /** The echo and the closing prompt around a huge config: taken from the recorded answer (none over exec). */
  private hugeFrame(command: string, first: string, last: string): { echo: string; prompt: string } {
    if (this.device.mode === "exec") return { echo: "", prompt: "" };
    const echo = first.startsWith(command) ? first.slice(0, first.indexOf("\n") + 1) : "";
    const prompt = last.slice(last.lastIndexOf("\n") + 1);
    // A recorded answer that stops at a pager line ("--More--") has no prompt of its own to end with.
    return { echo, prompt: /more/i.test(prompt) ? this.prompt : prompt };
  }

  private async sendHugeConfig(channel: ServerChannel, recorded: string): Promise<boolean> {
    const eol = recorded.includes("\r\n") ? "\r\n" : "\n";
    for (const block of configBlocks(this.device.faults.hugeOutputBytes!, eol)) {
      if (!(await this.send(channel, block))) return false;
    }
    return true;
  }

  /**
   * Sends answer bytes through the faults: up to stallAfterBytes / dropAfterBytes, then silence or a dropped
   * connection. False once the connection stopped answering (the caller sends nothing more).
   */
  private async send(channel: ServerChannel, text: string | Buffer): Promise<boolean> {
    if (this.silent) return false;
    const { faults, options } = this.device;
    let data = typeof text === "string" ? Buffer.from(text, "utf8") : text;
    const limits = [faults.stallAfterBytes, faults.dropAfterBytes].filter((n): n is number => n !== undefined);
    const limit = limits.length ? Math.min(...limits) : Infinity;
    const reached = this.answerBytes + data.length >= limit;
    if (reached) data = data.subarray(0, Math.max(0, limit - this.answerBytes));
    this.answerBytes += data.length;
    const open = await write(channel, data, options.chunkSize);
    if (!reached) return open;
    this.silent = true;
    if (faults.dropAfterBytes === limit) {
      // Let what was written reach the kernel, then close the TCP connection without an SSH disconnect.
      this.socket.write(Buffer.alloc(0), () => this.socket.destroy());
    }
    return false;
  }
}

/**
 * Cuts the client's keystrokes into lines, keeping each terminator as sent ("\n", "\r\n" or "\r"), and hands a
 * pager key over on arrival when it starts a line.
 */
function splitLines(channel: ServerChannel, keys: Set<string>, emit: (token: string) => void): void {
  const decoder = new StringDecoder("utf8");
  let line = "";
  let pendingCr: ReturnType<typeof setTimeout> | undefined;
  const flushCr = () => {
    pendingCr = undefined;
    const done = line + "\r";
    line = "";
    emit(done);
  };
  channel.on("data", (chunk: Buffer) => {
    const text = decoder.write(chunk);
    for (const ch of text) {
      if (pendingCr) {
        clearTimeout(pendingCr);
        pendingCr = undefined;
        if (ch === "\n") {
          const done = line + "\r\n";
          line = "";
          emit(done);
          continue;
        }
        flushCr();
      }
      if (ch === "\n") {
        const done = line + "\n";
        line = "";
        emit(done);
      } else if (ch === "\r") {
        pendingCr = setTimeout(flushCr, CR_GRACE_MS);
      } else if (line === "" && keys.has(ch)) {
        emit(ch);
      } else {
        line += ch;
        if (line.length > MAX_LINE) {
          emit(line);
          line = "";
        }
      }
    }
    // A "\r" at the end of a packet is decided when the next byte comes or the grace period ends.
  });
  channel.on("close", () => clearTimeout(pendingCr));
}

/** Writes to a channel in pieces, waiting when the peer's window is full. False if the channel closed. */
async function write(channel: ServerChannel, data: string | Buffer, chunkSize?: number): Promise<boolean> {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const step = chunkSize && chunkSize > 0 ? chunkSize : bytes.length || 1;
  for (let offset = 0; offset < bytes.length; offset += step) {
    if (channel.destroyed || !channel.writable) return false;
    const piece = bytes.subarray(offset, offset + step);
    if (!channel.write(piece)) {
      // The waits are cancelled once one wins, or a long answer piles up listeners on the channel.
      const done = new AbortController();
      const ok = await Promise.race([
        once(channel, "drain", { signal: done.signal }).then(() => true),
        once(channel, "close", { signal: done.signal }).then(() => false),
      ]).finally(() => done.abort());
      if (!ok) return false;
    } else if (chunkSize) {
      // Give each piece its own turn on the socket, so the client really sees a split stream.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return !channel.destroyed;
}

const BLOCK_BYTES = 64 * 1024;

/**
 * Exactly `total` bytes of config-looking lines, in blocks of about 64 KB, never one giant string. It starts with
 * the hostname line a real configuration has (the cisco-ios template's config_marker).
 */
export function* configBlocks(total: number, eol = "\n"): Generator<string> {
  let left = total;
  let port = 0;
  while (left > 0) {
    let block = "";
    while (left > 0 && block.length < BLOCK_BYTES) {
      port++;
      let text =
        [
          ...(port === 1 ? ["hostname huge-config"] : []),
          `interface GigabitEthernet${(port >> 6) + 1}/0/${port & 63}`,
          ` description access port ${port} to floor ${port % 40}`,
          ` switchport access vlan ${(port % 4000) + 2}`,
          " spanning-tree portfast",
          "!",
        ].join(eol) + eol;
      if (text.length > left)
        text = left <= eol.length ? eol.slice(0, left) : "!" + "-".repeat(left - eol.length - 1) + eol;
      block += text;
      left -= text.length;
    }
    yield block;
  }
}

/** The recording's configuration command: the longest answer among commands that look like one. */
function guessConfigCommand(simulation: Simulation): string | undefined {
  const looksLikeConfig = /config|export|^show(?:\s*\|.*)?$/i;
  const candidates = simulation.commands.filter((c) => looksLikeConfig.test(stripTerminator(c.line)));
  const pool = candidates.length ? candidates : simulation.commands.filter((c) => c.line.length > 1);
  const best = pool.reduce<(typeof pool)[number] | undefined>(
    (a, c) => (!a || c.answer.length > a.answer.length ? c : a),
    undefined,
  );
  return best && stripTerminator(best.line);
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

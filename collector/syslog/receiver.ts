import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { createServer, type Server, type Socket } from "node:net";
import { eq, isNotNull } from "drizzle-orm";
import type { Clock } from "../../src/kernel/clock.ts";
import type { Db } from "../../src/db/client.ts";
import { devices, templates } from "../../src/db/schema/index.ts";
import { queueChangeBackup, type ConfigChangeReport } from "../../src/platform/jobs/queue.ts";
import type { Logger } from "../../src/kernel/logger.ts";
import { compileTemplatePattern } from "../../src/modules/templates/index.ts";
import { describeError } from "../errors.ts";
import { parseTemplateOnce } from "../template-cache.ts";
import { MAX_MESSAGE_BYTES, parseSyslog } from "./parse.ts";
import { deviceJobAttempts } from "../../src/platform/settings/service.ts";

/**
 * The syslog receiver (docs/syslog.md): UDP and TCP on one port; a message from a device's address (or from a
 * trusted relay, naming the device's name or address in its HOSTNAME field) that one of its template's
 * `syslog.changed` rules matches queues a debounced download of that device (queueChangeBackup).
 * Everything else is counted and dropped: a message from an address that is no device's, one that is no syslog
 * message, one past its source's rate. The work per message is synchronous and small; the only waiting work,
 * writing the jobs, goes through a bounded map of pending changes, one entry per device, written one at a time:
 * a flood costs CPU at the rate it arrives, never memory.
 */

export type SyslogReceiverOptions = {
  port: number;
  bindAddress: string;
  /** Quiet time after a device's last change message before its download runs. */
  debounceMs: number;
  /** Messages per second one source address may send, and the burst it may send at once. */
  ratePerSecond: number;
  burst: number;
  /** Devices with a change waiting to be written; past it, changes are dropped and counted. */
  maxPending: number;
  maxTcpConnections: number;
  /** How often the address-to-device map is read again (devices added, moved, given another template). */
  directoryRefreshMs: number;
  /** Trusted relays' addresses: their messages are matched by the HOSTNAME field, not by the sender's address. */
  relays: string[];
};

export const DEFAULT_SYSLOG_OPTIONS: Omit<SyslogReceiverOptions, "port" | "bindAddress" | "debounceMs" | "relays"> = {
  ratePerSecond: 100,
  burst: 500,
  maxPending: 10_000,
  maxTcpConnections: 256,
  directoryRefreshMs: 10_000,
};

export type SyslogCounters = {
  received: number;
  malformed: number;
  unknown_source: number;
  rate_limited: number;
  /** From a device, but no change message of its template. */
  ignored: number;
  matched: number;
  queue_full: number;
  backups_queued: number;
  errors: number;
};

type Rule = { pattern: { exec(text: string): RegExpExecArray | null }; user?: number; source?: number; line?: number };
type Listener = { deviceId: number; rules: Rule[] };

const newCounters = (): SyslogCounters => ({
  received: 0,
  malformed: 0,
  unknown_source: 0,
  rate_limited: 0,
  ignored: 0,
  matched: 0,
  queue_full: 0,
  backups_queued: 0,
  errors: 0,
});
/** An IPv4 address as a dual-stack socket reports it. */
const plainAddress = (address: string) => address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
/** Sources remembered for rate limiting; past this the oldest are forgotten (a spoofed flood from many addresses). */
const MAX_SOURCES = 50_000;

export class SyslogReceiver {
  readonly counters = newCounters();
  private udp: UdpSocket | undefined;
  private tcp: Server | undefined;
  private readonly connections = new Set<Socket>();
  private directory = new Map<string, Listener[]>();
  /** The same listeners by device name, lower-cased: what a relayed message's HOSTNAME may say. */
  private byName = new Map<string, Listener[]>();
  private readonly rulesByCode = new Map<string, Rule[]>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly pending = new Map<number, ConfigChangeReport>();
  private draining: Promise<void> | undefined;
  private refreshTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly deps: { db: Db; clock: Clock; logger: Logger; queued?: () => void },
    readonly options: SyslogReceiverOptions,
  ) {}

  /** Reads the devices, then listens on UDP and TCP; throws (closing what it opened) when either cannot bind. */
  async start(): Promise<void> {
    await this.refreshDirectory();
    const { port, bindAddress } = this.options;
    try {
      this.udp = createSocket({ type: bindAddress.includes(":") ? "udp6" : "udp4" });
      this.udp.on("message", (data, rinfo) => this.handle(data.toString("utf8"), rinfo.address));
      await new Promise<void>((resolve, reject) => {
        this.udp!.once("error", reject);
        this.udp!.bind(port, bindAddress, () => {
          this.udp!.off("error", reject);
          this.udp!.on("error", (err) =>
            this.deps.logger.warn("syslog UDP socket error", { error: describeError(err) }),
          );
          resolve();
        });
      });
      this.tcp = createServer((socket) => this.accept(socket));
      this.tcp.maxConnections = this.options.maxTcpConnections;
      await new Promise<void>((resolve, reject) => {
        this.tcp!.once("error", reject);
        this.tcp!.listen(port, bindAddress, () => {
          this.tcp!.off("error", reject);
          resolve();
        });
      });
    } catch (err) {
      await this.stop();
      throw err;
    }
    this.refreshTimer = setInterval(() => void this.refreshDirectory(), this.options.directoryRefreshMs);
    this.refreshTimer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.refreshTimer);
    const udp = this.udp;
    const tcp = this.tcp;
    this.udp = undefined;
    this.tcp = undefined;
    for (const socket of this.connections) socket.destroy();
    await Promise.all([
      udp && new Promise<void>((resolve) => udp.close(() => resolve())),
      tcp && new Promise<void>((resolve) => tcp.close(() => resolve())),
    ]);
    await this.idle();
  }

  /** Resolves once every pending change is written (tests, and a clean stop). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Which devices each address belongs to, and their templates' change rules. */
  async refreshDirectory(): Promise<void> {
    try {
      const rows = await this.deps.db
        .select({ id: devices.id, ip: devices.ip, name: devices.name, code: templates.code })
        .from(devices)
        .innerJoin(templates, eq(templates.id, devices.templateId))
        .where(isNotNull(devices.templateId));
      const directory = new Map<string, Listener[]>();
      const byName = new Map<string, Listener[]>();
      for (const row of rows) {
        const listener = { deviceId: row.id, rules: this.rulesOf(row.code) };
        (directory.get(row.ip) ?? directory.set(row.ip, []).get(row.ip)!).push(listener);
        const name = row.name.toLowerCase();
        (byName.get(name) ?? byName.set(name, []).get(name)!).push(listener);
      }
      this.directory = directory;
      this.byName = byName;
    } catch (err) {
      this.counters.errors++;
      this.deps.logger.warn("could not read the devices for the syslog receiver; keeping the last ones", {
        error: describeError(err),
      });
    }
  }

  private rulesOf(code: string): Rule[] {
    const known = this.rulesByCode.get(code);
    if (known) return known;
    const parsed = parseTemplateOnce(code);
    const rules = parsed.ok
      ? (parsed.template.syslog?.changed ?? []).map((r) => ({
          pattern: compileTemplatePattern(r.pattern, "line"),
          user: r.user,
          source: r.source,
          line: r.line,
        }))
      : [];
    this.rulesByCode.set(code, rules);
    return rules;
  }

  /** One received message from `address`: counted, and matched when it comes from a device. */
  handle(raw: string, address: string): void {
    this.counters.received++;
    const source = plainAddress(address);
    if (!this.allow(source)) {
      this.counters.rate_limited++;
      return;
    }
    const relayed = this.options.relays.includes(source);
    const direct = relayed ? undefined : this.directory.get(source);
    if (!relayed && !direct) {
      this.counters.unknown_source++;
      return;
    }
    const message = parseSyslog(raw);
    if (!message) {
      this.counters.malformed++;
      return;
    }
    // Only a trusted relay's word is taken for which device spoke: its HOSTNAME field, a device's name or address.
    const hostname = message.hostname?.toLowerCase();
    const listeners = relayed
      ? hostname === undefined
        ? undefined
        : (this.byName.get(hostname) ?? this.directory.get(plainAddress(hostname)))
      : direct;
    if (!listeners) {
      this.counters.unknown_source++;
      return;
    }
    let matched = false;
    for (const listener of listeners) {
      for (const rule of listener.rules) {
        const m = rule.pattern.exec(message.text);
        if (!m) continue;
        const group = (n: number | undefined) =>
          n === undefined ? undefined : m[n]?.trim().slice(0, 200) || undefined;
        this.changed(listener.deviceId, { user: group(rule.user), source: group(rule.source), line: group(rule.line) });
        matched = true;
        break;
      }
    }
    if (matched) this.counters.matched++;
    else this.counters.ignored++;
  }

  /** A token bucket per source address, filled by the injected clock. */
  private allow(source: string): boolean {
    const now = this.deps.clock.now().getTime();
    let bucket = this.buckets.get(source);
    if (!bucket) {
      if (this.buckets.size >= MAX_SOURCES) this.buckets.delete(this.buckets.keys().next().value!);
      bucket = { tokens: this.options.burst, at: now };
      this.buckets.set(source, bucket);
    }
    bucket.tokens = Math.min(
      this.options.burst,
      bucket.tokens + ((now - bucket.at) / 1000) * this.options.ratePerSecond,
    );
    bucket.at = now;
    if (bucket.tokens < 1) return false;
    bucket.tokens--;
    return true;
  }

  private changed(deviceId: number, change: ConfigChangeReport): void {
    const before = this.pending.get(deviceId);
    if (!before && this.pending.size >= this.options.maxPending) {
      this.counters.queue_full++;
      return;
    }
    this.pending.set(deviceId, {
      user: change.user ?? before?.user,
      source: change.source ?? before?.source,
      line: change.line ?? before?.line,
    });
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  private async drain(): Promise<void> {
    while (this.pending.size) {
      const [deviceId, change] = this.pending.entries().next().value!;
      this.pending.delete(deviceId);
      try {
        await queueChangeBackup(
          this.deps.db,
          { deviceId, change, debounceMs: this.options.debounceMs, maxAttempts: await deviceJobAttempts(this.deps.db) },
          this.deps.clock.now(),
        );
        this.counters.backups_queued++;
        this.deps.queued?.();
      } catch (err) {
        this.counters.errors++;
        this.deps.logger.warn("could not queue a backup for a configuration change", {
          device: deviceId,
          error: describeError(err),
        });
      }
    }
  }

  /**
   * A TCP sender (RFC 6587): each frame either octet-counted (`LEN SP MSG`) or ended by a newline. A connection
   * whose frame grows past the message limit without ending is malformed and closed.
   */
  private accept(socket: Socket): void {
    this.connections.add(socket);
    socket.on("close", () => this.connections.delete(socket));
    socket.on("error", () => {});
    const address = socket.remoteAddress ?? "";
    let buffer: Buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
      for (;;) {
        const counted = /^(\d{1,5}) /.exec(buffer.subarray(0, 6).toString("latin1"));
        if (counted) {
          const length = Number(counted[1]);
          const start = counted[0].length;
          if (length > MAX_MESSAGE_BYTES) return this.refuse(socket);
          if (buffer.length < start + length) break;
          this.handle(buffer.subarray(start, start + length).toString("utf8"), address);
          buffer = buffer.subarray(start + length);
          continue;
        }
        const end = buffer.indexOf(0x0a);
        if (end < 0) break;
        const frame = buffer.subarray(0, end).toString("utf8");
        buffer = buffer.subarray(end + 1);
        if (frame.trim()) this.handle(frame, address);
      }
      if (buffer.length > MAX_MESSAGE_BYTES + 8) this.refuse(socket);
    });
  }

  private refuse(socket: Socket): void {
    this.counters.received++;
    this.counters.malformed++;
    socket.destroy();
  }
}

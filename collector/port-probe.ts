import { connect } from "node:net";

/**
 * Whether something listens on a TCP port of an address, and what it speaks: an SSH server greets first with
 * "SSH-"; a port that says anything else, or nothing within `sniffMs`, is taken for Telnet (port 22 for SSH).
 * Nothing is sent: the connection is closed as soon as it is known.
 */
export function probePort(
  host: string,
  port: number,
  timeoutMs: number,
  sniffMs = 800,
): Promise<{ port: number; protocol: "ssh" | "telnet" } | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let settled = false;
    const finish = (value: { port: number; protocol: "ssh" | "telnet" } | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(value);
    };
    const guess = () => ({ port, protocol: port === 22 ? ("ssh" as const) : ("telnet" as const) });
    let connected = false;
    let timer = setTimeout(() => finish(undefined), timeoutMs);
    socket.once("connect", () => {
      connected = true;
      clearTimeout(timer);
      timer = setTimeout(() => finish(guess()), sniffMs);
    });
    socket.once("data", (chunk: Buffer) =>
      finish({ port, protocol: chunk.subarray(0, 4).toString("latin1") === "SSH-" ? "ssh" : "telnet" }),
    );
    socket.once("error", () => finish(undefined));
    // A server that accepts and hangs up at once still listens there.
    socket.once("close", () => finish(connected ? guess() : undefined));
  });
}

/**
 * A scan's bound on connections: at most `perSecond` started each second (spaced evenly) and `total` in all.
 * `take` waits for the next slot and says whether the scan may connect at all.
 */
export function connectGate(limits: { perSecond: number; total: number }) {
  let used = 0;
  let next = 0;
  const spacing = 1000 / limits.perSecond;
  return {
    async take(): Promise<boolean> {
      if (used >= limits.total) return false;
      used++;
      const now = Date.now();
      const at = Math.max(now, next);
      next = at + spacing;
      if (at > now) await new Promise((r) => setTimeout(r, at - now));
      return true;
    },
    get used() {
      return used;
    },
  };
}

import { existsSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { failWithOutput, start, stopGroup, type Spawned } from "./process.ts";
import { until } from "./until.ts";

/**
 * A real Telnet server on loopback: GNU inetutils telnetd (Debian's inetutils-telnetd), started per connection by
 * inetutils-inetd from a config file in a temp dir, logging in through /bin/login (accounts: sshd.ts createTestUser).
 */

const TELNETD = "/usr/sbin/telnetd";
const INETD = "/usr/sbin/inetutils-inetd";

export function telnetdUnavailable(): string | undefined {
  if (!existsSync(TELNETD) || !existsSync(INETD))
    return "Debian packages inetutils-telnetd and inetutils-inetd are not installed";
  if (process.getuid?.() !== 0) return "not running as root: a Telnet login needs a test account made with useradd";
  return undefined;
}

/** inetd in the foreground (-d) on 127.0.0.1:<port>, running telnetd for each connection; -h: no host banner. */
export async function startTelnetd(dir: string, port: number): Promise<Spawned> {
  const config = join(dir, "inetd.conf");
  writeFileSync(config, `127.0.0.1:${port} stream tcp nowait root ${TELNETD} telnetd -h\n`);
  const inetd = start(INETD, ["-d", `--pidfile=${join(dir, "inetd.pid")}`, config], {}, dir);
  // telnetd's first bytes are its option requests (IAC = 255).
  const firstByte = () =>
    new Promise<number | undefined>((resolve) => {
      if (inetd.child.exitCode !== null) throw new Error(`inetd exited (${inetd.child.exitCode})`);
      const socket = connect({ host: "127.0.0.1", port });
      const done = (byte?: number) => {
        socket.destroy();
        resolve(byte);
      };
      socket.setTimeout(1_000, () => done());
      socket.once("data", (d) => done(d[0]));
      socket.on("error", () => done());
    });
  try {
    await failWithOutput(
      inetd,
      until(`telnetd to answer on 127.0.0.1:${port}`, firstByte, (b) => b === 255, { tries: 200, everyMs: 50 }),
    );
  } catch (e) {
    stopGroup(inetd);
    throw e;
  }
  return inetd;
}

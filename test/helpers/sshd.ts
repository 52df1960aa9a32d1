import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { failWithOutput, freePort, start, stopGroup, type Spawned } from "./process.ts";
import { until } from "./until.ts";

/**
 * A real OpenSSH server (Debian's openssh-server) on 127.0.0.1 for collector tests: run in the foreground from
 * a config file in a temp dir, with its own host key, pid file and authorized_keys, never the machine's
 * /etc/ssh. Password logins need a real account, so tests that use one create a throwaway user (root only).
 */

export const SSHD = "/usr/sbin/sshd";

/** Why real-sshd tests cannot run here, or undefined when they can. */
export function sshdUnavailable(): string | undefined {
  if (!existsSync(SSHD) || !existsSync("/usr/bin/ssh-keygen"))
    return "Debian package openssh-server is not installed (no /usr/sbin/sshd)";
  if (process.getuid?.() !== 0) return "not running as root: a password login needs a test account made with useradd";
  return undefined;
}

/** "dsa" is for legacy tests: OpenSSH 9.2 still makes and (when configured) serves DSA keys. */
export type KeyType = "ed25519" | "rsa" | "dsa";
export type KeyPair = {
  privateKey: string;
  publicKey: string /** OpenSSH's own notation, from ssh-keygen -lf */;
  fingerprint: string;
};

/** The "SHA256:..." fingerprint ssh-keygen prints for a public key file. */
export function keyFingerprint(publicKeyFile: string): string {
  const line = execFileSync("ssh-keygen", ["-l", "-E", "sha256", "-f", publicKeyFile], { encoding: "utf8" });
  const fingerprint = line.split(/\s+/)[1];
  if (!fingerprint?.startsWith("SHA256:")) throw new Error(`unexpected ssh-keygen -l output: ${line}`);
  return fingerprint;
}

/** A fresh unencrypted key pair written to `path` and `path`.pub by ssh-keygen (OpenSSH private key format). */
export function generateKeyPair(path: string, type: KeyType): KeyPair {
  rmSync(path, { force: true });
  rmSync(`${path}.pub`, { force: true });
  execFileSync("ssh-keygen", [
    "-q",
    "-t",
    type,
    ...(type === "rsa" ? ["-b", "2048"] : []),
    "-N",
    "",
    "-C",
    "netkeep-test",
    "-f",
    path,
  ]);
  return {
    privateKey: readFileSync(path, "utf8"),
    publicKey: readFileSync(`${path}.pub`, "utf8"),
    fingerprint: keyFingerprint(`${path}.pub`),
  };
}

/** A local account with a password, for password logins; remove it with removeTestUser. */
export function createTestUser(name: string, password: string): void {
  removeTestUser(name); // left over from an interrupted run
  execFileSync("useradd", [
    "--no-create-home",
    "--home-dir",
    "/",
    "--shell",
    "/bin/sh",
    "--comment",
    "netkeep sshd test",
    name,
  ]);
  execFileSync("chpasswd", [], { input: `${name}:${password}\n` });
}

export function removeTestUser(name: string): void {
  try {
    execFileSync("id", [name], { stdio: "ignore" });
  } catch {
    return;
  }
  execFileSync("userdel", [name]);
}

export const randomPassword = () => randomBytes(12).toString("base64url");

export type SshdOptions = {
  /** The only account that may log in. */
  user: string;
  hostKeyType?: KeyType;
  /** Public keys (OpenSSH one-line text) allowed to log in. */
  authorizedKeys?: string[];
  /** More sshd_config lines, e.g. { KexAlgorithms: "diffie-hellman-group14-sha1" } to restrict algorithms. */
  config?: Record<string, string>;
};

export type Sshd = {
  host: string;
  port: number;
  /** The host key's fingerprint as ssh-keygen prints it. */
  hostKeyFingerprint: string;
  /** What sshd printed (it runs with -e, so its log goes there too). */
  output(): string;
  /** Stops sshd and starts it again on the same port, with a new host key when asked. */
  restart(options?: { newHostKey?: boolean }): Promise<void>;
  stop(): Promise<void>;
};

/** Starts sshd on 127.0.0.1:<free port> and resolves once it answers with its SSH banner. */
export async function startSshd(options: SshdOptions): Promise<Sshd> {
  // sshd refuses to start without its compiled-in privilege separation directory, which the Debian service
  // creates at boot; on a machine where the service never ran it is missing.
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const dir = mkdtempSync(join(tmpdir(), "netkeep-sshd-"));
  // sshd reads AuthorizedKeysFile as the logging-in user, so the dir must be searchable by it.
  chmodSync(dir, 0o755);
  const hostKey = join(dir, "host_key");
  const authorizedKeys = join(dir, "authorized_keys");
  writeFileSync(authorizedKeys, (options.authorizedKeys ?? []).map((k) => k.trim() + "\n").join(""), { mode: 0o644 });
  const type = options.hostKeyType ?? "ed25519";
  const port = await freePort();
  const configFile = join(dir, "sshd_config");
  writeFileSync(
    configFile,
    [
      "ListenAddress 127.0.0.1",
      `Port ${port}`,
      `HostKey ${hostKey}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      `AuthorizedKeysFile ${authorizedKeys}`,
      "UsePAM no",
      "StrictModes no",
      `AllowUsers ${options.user}`,
      "PermitRootLogin no",
      "PasswordAuthentication yes",
      "AllowTcpForwarding no",
      "AllowAgentForwarding no",
      "X11Forwarding no",
      "PermitTunnel no",
      ...Object.entries(options.config ?? {}).map(([k, v]) => `${k} ${v}`),
      "",
    ].join("\n"),
  );

  let hostKeyFingerprint = generateKeyPair(hostKey, type).fingerprint;
  let spawned: Spawned | undefined;

  const launch = async () => {
    spawned = start(SSHD, ["-D", "-e", "-f", configFile], {}, dir);
    await waitForBanner(port, spawned);
  };
  const stop = async () => {
    if (!spawned || spawned.child.exitCode !== null || spawned.child.signalCode !== null) return;
    stopGroup(spawned);
    await spawned.exited;
  };
  await launch();

  return {
    host: "127.0.0.1",
    port,
    get hostKeyFingerprint() {
      return hostKeyFingerprint;
    },
    output: () => spawned?.output() ?? "",
    async restart({ newHostKey = false } = {}) {
      await stop();
      if (newHostKey) hostKeyFingerprint = generateKeyPair(hostKey, type).fingerprint;
      await launch();
    },
    async stop() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Connects until the server sends "SSH-2.0-": it is listening and accepting, not just started. */
async function waitForBanner(port: number, spawned: Spawned): Promise<void> {
  const banner = () =>
    new Promise<string>((resolve) => {
      if (spawned.child.exitCode !== null)
        throw new Error(`sshd exited (${spawned.child.exitCode}) before accepting connections`);
      const socket = connect({ host: "127.0.0.1", port });
      let text = "";
      const done = () => {
        socket.destroy();
        resolve(text);
      };
      socket.setTimeout(1_000, done);
      socket.on("data", (d) => {
        text += d;
        if (text.includes("\n")) done();
      });
      socket.on("error", done);
      socket.on("close", done);
    });
  await failWithOutput(
    spawned,
    until(`sshd to accept connections on 127.0.0.1:${port}`, banner, (b) => b.startsWith("SSH-2.0-"), {
      tries: 200,
      everyMs: 50,
    }),
  );
}

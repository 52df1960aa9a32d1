import { createHash, getCiphers, getHashes } from "node:crypto";
import { Client, type ClientChannel, type ConnectConfig } from "ssh2";
import { SessionError, type Channel } from "../session.ts";
import { receiveScpFile } from "./scp.ts";
import type { ByteChannel } from "../netconf/client.ts";

export type SshTarget = {
  host: string;
  port: number;
  username: string;
  password?: string;
  privateKey?: string;
  passphrase?: string;
  /** Offer old key exchanges, host keys and ciphers after the modern ones, for gear that knows nothing newer. */
  legacyAlgorithms: boolean;
  /** The pinned host key fingerprint ("SHA256:..."), or null to trust and pin on first use. */
  pinnedFingerprint: string | null;
  connectTimeoutMs: number;
};

const cipherAvailable = (name: string) => getCiphers().includes(name);

/**
 * Diffie-Hellman group exchange goes last. Node runs OpenSSL's safe-prime check on the prime the server picks,
 * synchronously, before using it: here about 3 s for the 3072-bit prime an AES-128 session asks for and close to
 * a minute for the 8192-bit one AES-256 asks for, with the collector's event loop (every other session and the
 * lease heartbeats) blocked throughout (ssh2 issues 1031 and 1386). ssh2 ranks it above the fixed groups, which
 * cost nothing to set up, so a server offering both (OpenSSH before 6.5, much network gear) got the slow one.
 */
const GROUP_EXCHANGE = "diffie-hellman-group-exchange-sha256";

/**
 * ssh2's defaults, with group exchange moved behind the fixed groups; with `legacy`, old algorithms appended
 * after the modern ones, never replacing them, so modern devices still get modern algorithms. Among the old key
 * exchanges the 2048-bit fixed group comes first (nothing to check), then group exchange, then the 1024-bit group.
 */
function algorithmsFor(legacy: boolean): ConnectConfig["algorithms"] {
  if (!legacy)
    return { kex: { remove: [GROUP_EXCHANGE], append: [GROUP_EXCHANGE] } } as unknown as ConnectConfig["algorithms"];
  const cipher = [
    ["aes128-cbc", "aes-128-cbc"],
    ["aes192-cbc", "aes-192-cbc"],
    ["aes256-cbc", "aes-256-cbc"],
    ["3des-cbc", "des-ede3-cbc"],
  ]
    .filter(([, openssl]) => cipherAvailable(openssl!))
    .map(([ssh]) => ssh!);
  return {
    kex: {
      remove: [GROUP_EXCHANGE],
      append: [
        "diffie-hellman-group14-sha1",
        GROUP_EXCHANGE,
        "diffie-hellman-group-exchange-sha1",
        "diffie-hellman-group1-sha1",
      ],
    },
    // ssh-rsa (SHA-1) host keys and hmac-sha1 are in ssh2's defaults already.
    serverHostKey: { append: ["ssh-dss"] },
    cipher: { append: cipher },
    hmac: { append: getHashes().includes("md5") ? ["hmac-md5"] : [] },
  } as unknown as ConnectConfig["algorithms"];
}

/** OpenSSH's notation: SHA256 of the key blob, base64 without padding. */
export const fingerprintOf = (key: Buffer) =>
  "SHA256:" + createHash("sha256").update(key).digest("base64").replace(/=+$/, "");

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ECONNRESET",
  "EPIPE",
]);

/** An open SSH connection: an interactive shell, or one exec channel per command. */
export class SshConnection {
  /** Set once the transport is gone: an exec channel that closes after that was cut off, not finished. */
  private gone = false;

  private constructor(
    private readonly client: Client,
    readonly fingerprint: string,
  ) {
    client.on("end", () => (this.gone = true));
    client.on("close", () => (this.gone = true));
  }

  static connect(target: SshTarget): Promise<SshConnection> {
    return new Promise((resolve, reject) => {
      const client = new Client();
      let seen: string | undefined;
      let settled = false;
      const finish = (error: SessionError | undefined) => {
        if (settled) return;
        settled = true;
        if (error) {
          client.end();
          reject(error);
        } else resolve(new SshConnection(client, seen!));
      };
      client.on("ready", () => finish(undefined));
      client.on("keyboard-interactive", (_name, _instructions, _lang, prompts, answer) => {
        // Devices ask for the password this way; any other question gets the password too, as OpenSSH would type it.
        answer(prompts.map(() => target.password ?? ""));
      });
      client.on("error", (err: Error & { level?: string; code?: string }) => {
        if (seen && target.pinnedFingerprint && seen !== target.pinnedFingerprint) {
          finish(
            new SessionError(
              "host_key_changed",
              `the host key changed: pinned ${target.pinnedFingerprint}, the device presented ${seen}; accept the new key through the API if the change is expected`,
            ),
          );
        } else if (err.level === "client-authentication") {
          finish(new SessionError("auth_failed", "the device refused the credentials"));
        } else if (err.level === "client-timeout") {
          finish(new SessionError("timeout", `no SSH handshake within ${target.connectTimeoutMs / 1000} s`));
        } else if (err.code && UNREACHABLE.has(err.code)) {
          finish(new SessionError("unreachable", `cannot reach ${target.host}:${target.port} (${err.code})`));
        } else if (/handshake failed|no matching/i.test(err.message)) {
          finish(
            new SessionError(
              "error",
              `SSH negotiation failed: ${err.message}${target.legacyAlgorithms ? "" : "; old devices may need legacy_algorithms"}`,
            ),
          );
        } else {
          finish(new SessionError("error", `SSH error: ${err.message}`));
        }
      });
      client.on(
        "close",
        () =>
          settled ||
          finish(
            new SessionError("unreachable", `the connection to ${target.host}:${target.port} closed before login`),
          ),
      );
      client.connect({
        host: target.host,
        port: target.port,
        username: target.username,
        password: target.password,
        privateKey: target.privateKey,
        passphrase: target.passphrase,
        tryKeyboard: true,
        readyTimeout: target.connectTimeoutMs,
        keepaliveInterval: 15_000,
        algorithms: algorithmsFor(target.legacyAlgorithms),
        hostVerifier: (key: Buffer) => {
          seen = fingerprintOf(key);
          return !target.pinnedFingerprint || seen === target.pinnedFingerprint;
        },
      });
    });
  }

  /** An interactive shell on a wide pseudo-terminal, so devices do not wrap long configuration lines. */
  shell(): Promise<Channel & { close(): void }> {
    return new Promise((resolve, reject) => {
      this.client.shell({ term: "vt100", cols: 511, rows: 24 }, (err, stream) => {
        if (err) return reject(new SessionError("error", `the device refused a shell: ${err.message}`));
        resolve(channelOf(stream));
      });
    });
  }

  /** The device's SSH subsystem `name` (NETCONF's is `netconf`, RFC 6242), as a byte stream. */
  subsystem(name: string): Promise<ByteChannel> {
    return new Promise((resolve, reject) => {
      this.client.subsys(name, (err, stream) => {
        if (err)
          return reject(
            new SessionError(
              "error",
              `the device refused the SSH subsystem '${name}': ${err.message}; is it enabled on the device (and on this port)?`,
            ),
          );
        stream.on("error", () => {});
        resolve({
          write: (data) => void stream.write(data),
          onData: (listener) => void stream.on("data", listener),
          onClose: (listener) => void stream.on("close", () => listener()),
          close: () => stream.close(),
        });
      });
    });
  }

  /**
   * Runs one command on its own exec channel; its end of stream is the end of the output. A command the device
   * says failed (a non-zero exit status, or killed by a signal) and a channel cut off by a lost connection are
   * errors: storing their output would replace a configuration with an empty or truncated one. Devices that send
   * no exit status at all are taken at their word.
   */
  exec(command: string, idleTimeoutMs: number, maxOutputBytes: number): Promise<string> {
    return new Promise((resolve, reject) => {
      this.client.exec(command, (err, stream) => {
        if (err) return reject(new SessionError("error", `the device refused to run '${command}': ${err.message}`));
        const decoder = new TextDecoder();
        const errDecoder = new TextDecoder();
        let out = "";
        let stderr = "";
        let exit: { code: number } | { signal: string } | undefined;
        let timer: ReturnType<typeof setTimeout>;
        const arm = () => {
          clearTimeout(timer);
          timer = setTimeout(() => {
            stream.close();
            reject(
              new SessionError(
                "timeout",
                `'${command}' produced nothing for ${idleTimeoutMs / 1000} s`,
                out.split("\n").slice(-10),
              ),
            );
          }, idleTimeoutMs);
        };
        arm();
        stream.on("data", (chunk: Buffer) => {
          out += decoder.decode(chunk, { stream: true });
          if (out.length > maxOutputBytes) {
            clearTimeout(timer);
            stream.close();
            reject(
              new SessionError(
                "error",
                `the output of '${command}' exceeded ${Math.round(maxOutputBytes / 1048576)} MB`,
              ),
            );
            return;
          }
          arm();
        });
        // Kept only for the error report, so bounded.
        stream.stderr.on("data", (chunk: Buffer) => {
          if (stderr.length < 65_536) stderr += errDecoder.decode(chunk, { stream: true });
          arm();
        });
        stream.on(
          "exit",
          (code: number | null, signal?: string) => (exit = code === null ? { signal: signal ?? "unknown" } : { code }),
        );
        stream.on("close", () => {
          clearTimeout(timer);
          out += decoder.decode();
          const lastLines = (stderr.trim() ? stderr : out)
            .split("\n")
            .filter((l) => l.trim())
            .slice(-10);
          if (!exit && this.gone) {
            reject(
              new SessionError(
                "error",
                `the connection closed while '${command}' was running; its output is incomplete`,
                lastLines,
              ),
            );
          } else if (exit && ("signal" in exit || exit.code !== 0)) {
            const how = "signal" in exit ? `was killed by signal ${exit.signal}` : `exited with status ${exit.code}`;
            const said = stderr
              .split("\n")
              .find((l) => l.trim())
              ?.trim()
              .slice(0, 200);
            reject(
              new SessionError(
                "error",
                `'${command}' failed on the device: it ${how}${said ? ` (${said})` : ""}`,
                lastLines,
              ),
            );
          } else {
            resolve(out);
          }
        });
      });
    });
  }

  /** Fetches one file from the device over SCP on an exec channel (scp.ts), as text. */
  fetchFile(path: string, idleTimeoutMs: number, maxOutputBytes: number): Promise<string> {
    return new Promise((resolve, reject) => {
      this.client.exec(`scp -f ${path}`, (err, stream) => {
        if (err) return reject(new SessionError("error", `the device refused SCP of '${path}': ${err.message}`));
        receiveScpFile(stream, path, { idleTimeoutMs, maxBytes: maxOutputBytes }).then(
          (file) => resolve(new TextDecoder().decode(file)),
          reject,
        );
      });
    });
  }

  close(): void {
    this.client.end();
  }
}

function channelOf(stream: ClientChannel): Channel & { close(): void } {
  const decoder = new TextDecoder();
  return {
    write: (data) => void stream.write(data),
    onData: (listener) => {
      stream.on("data", (chunk: Buffer) => listener(decoder.decode(chunk, { stream: true })));
      stream.stderr.on("data", (chunk: Buffer) => listener(decoder.decode(chunk, { stream: true })));
    },
    onClose: (listener) => stream.on("close", () => listener()),
    close: () => stream.close(),
  };
}

import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A key pair made for one test run; private keys are never committed. */
export type TestKeySet = { format: string; plain: string; encrypted: string; passphrase: string; publicKey: string };

const hasSshKeygen = () => !spawnSync("ssh-keygen", ["-?"], { stdio: "ignore" }).error;

/** OpenSSH keys from ssh-keygen, the format most operators paste. */
function opensshKeys(): TestKeySet {
  const dir = mkdtempSync(join(tmpdir(), "netkeep-keys-"));
  try {
    const passphrase = "correct horse key phrase";
    const make = (name: string, pass: string) => {
      const run = spawnSync(
        "ssh-keygen",
        ["-q", "-t", "ed25519", "-N", pass, "-C", "netkeep-test", "-f", join(dir, name)],
        { encoding: "utf8" },
      );
      if (run.status !== 0) throw new Error(`ssh-keygen failed: ${run.stderr}`);
      return readFileSync(join(dir, name), "utf8");
    };
    const plain = make("plain", "");
    const encrypted = make("encrypted", passphrase);
    return {
      format: "OpenSSH ed25519 (ssh-keygen)",
      plain,
      encrypted,
      passphrase,
      publicKey: readFileSync(join(dir, "plain.pub"), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An RSA public key as an authorized_keys line: "ssh-rsa" + e + n, each length-prefixed (RFC 4253 6.6). */
function opensshPublicLine(jwk: { n?: string; e?: string }): string {
  const field = (bytes: Buffer) =>
    Buffer.concat([Buffer.from([0, 0, 0, 0].map((_, i) => (bytes.length >>> (24 - 8 * i)) & 0xff)), bytes]);
  // mpint: a leading zero byte keeps a number whose top bit is set from reading as negative.
  const mpint = (b64url: string) => {
    const raw = Buffer.from(b64url, "base64url");
    return field(raw[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), raw]) : raw);
  };
  return `ssh-rsa ${Buffer.concat([field(Buffer.from("ssh-rsa")), mpint(jwk.e!), mpint(jwk.n!)]).toString("base64")} netkeep-test\n`;
}

/** PEM (PKCS#1) RSA keys from node:crypto: always available, and the other format the collector reads. */
function pemKeys(): TestKeySet {
  const passphrase = "pem key passphrase";
  const plainPair = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const plain = plainPair.privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  const encrypted = generateKeyPairSync("rsa", { modulusLength: 2048 })
    .privateKey.export({ type: "pkcs1", format: "pem", cipher: "aes-256-cbc", passphrase })
    .toString();
  return {
    format: "PEM PKCS#1 RSA (node:crypto)",
    plain,
    encrypted,
    passphrase,
    publicKey: opensshPublicLine(plainPair.publicKey.export({ format: "jwk" })),
  };
}

/** Every key format this machine can make: PEM always, OpenSSH when ssh-keygen is installed. */
export function testKeySets(): TestKeySet[] {
  return hasSshKeygen() ? [opensshKeys(), pemKeys()] : [pemKeys()];
}

import ssh2 from "ssh2";

/**
 * What the collector's SSH library makes of a private key, checked when the key is stored so a bad key is a
 * 422 today rather than a failed backup tomorrow. ssh2 reads OpenSSH and PEM (PKCS#1, SEC1) private keys,
 * plain or encrypted; PKCS#8 ("BEGIN PRIVATE KEY") and PuTTY files it cannot use, so neither can netkeep.
 */
export type SshKeyCheck =
  | { ok: true; type: string }
  | { ok: false; problem: "malformed"; reason: string }
  | { ok: false; problem: "public-key" | "needs-passphrase" | "wrong-passphrase" | "not-encrypted" };

const parse = (key: string, passphrase?: string) => {
  const parsed = ssh2.utils.parseKey(key, passphrase);
  return Array.isArray(parsed) ? parsed[0]! : parsed;
};

/** ssh2 says "no passphrase given" for an encrypted key read without one, in every format it knows. */
const isMissingPassphrase = (err: Error) => /no passphrase given/i.test(err.message);

export function checkSshPrivateKey(key: string, passphrase?: string): SshKeyCheck {
  const plain = parse(key);
  if (plain instanceof Error) {
    // Some of ssh2's messages quote bytes from inside the key after a colon; keep only the wording before it.
    if (!isMissingPassphrase(plain))
      return { ok: false, problem: "malformed", reason: plain.message.split(":")[0]!.trim() };
    if (passphrase === undefined) return { ok: false, problem: "needs-passphrase" };
    const decrypted = parse(key, passphrase);
    return decrypted instanceof Error ? { ok: false, problem: "wrong-passphrase" } : { ok: true, type: decrypted.type };
  }
  if (!plain.isPrivateKey()) return { ok: false, problem: "public-key" };
  // A passphrase for a key that has none is a sign the wrong key was pasted; say so rather than store it.
  if (passphrase !== undefined) return { ok: false, problem: "not-encrypted" };
  return { ok: true, type: plain.type };
}

import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from "node:crypto";

/**
 * Sealed boxes, libsodium's crypto_box_seal in spirit, on Node's own X25519, HKDF-SHA256 and ChaCha20-Poly1305:
 * anyone with a collector's public key can seal a message only that collector's private key opens, and the
 * sender keeps nothing that opens it again (a fresh ephemeral key per message). The server seals each job's
 * device login to the remote collector that claimed it (src/runtime/collector-api/).
 *
 * Wire form, base64: ephemeral public key (32) | nonce (12) | tag (16) | ciphertext.
 */
const INFO = Buffer.from("netkeep sealed box v1");

const publicKeyOf = (raw: string): KeyObject =>
  createPublicKey({
    key: { kty: "OKP", crv: "X25519", x: Buffer.from(raw, "base64").toString("base64url") },
    format: "jwk",
  });

const rawPublic = (key: KeyObject): Buffer => Buffer.from(key.export({ format: "jwk" }).x!, "base64url");

/** A collector's key pair: the public half as raw base64 (what it enrolls with), the private half as raw base64. */
export function newKeyPair(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync("x25519");
  return {
    publicKey: rawPublic(publicKey).toString("base64"),
    privateKey: Buffer.from(privateKey.export({ format: "jwk" }).d!, "base64url").toString("base64"),
  };
}

/** Whether a text is a raw X25519 public key in base64 (32 bytes). */
export function isPublicKey(raw: string): boolean {
  try {
    return Buffer.from(raw, "base64").length === 32 && Boolean(publicKeyOf(raw));
  } catch {
    return false;
  }
}

function keyFor(shared: Buffer, ephemeral: Buffer, recipient: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", shared, Buffer.concat([ephemeral, recipient]), INFO, 32));
}

export function seal(recipientPublicKey: string, plaintext: string): string {
  const recipient = publicKeyOf(recipientPublicKey);
  const eph = generateKeyPairSync("x25519");
  const ephRaw = rawPublic(eph.publicKey);
  const key = keyFor(diffieHellman({ privateKey: eph.privateKey, publicKey: recipient }), ephRaw, rawPublic(recipient));
  const nonce = randomBytes(12);
  const cipher = createCipheriv("chacha20-poly1305", key, nonce, { authTagLength: 16 });
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return Buffer.concat([ephRaw, nonce, cipher.getAuthTag(), body]).toString("base64");
}

/** Opens a sealed box with the recipient's key pair; throws when it was not sealed to it or was altered. */
export function open(keyPair: { publicKey: string; privateKey: string }, sealed: string): string {
  const bytes = Buffer.from(sealed, "base64");
  if (bytes.length < 60) throw new Error("the sealed box is too short");
  const ephRaw = bytes.subarray(0, 32);
  const nonce = bytes.subarray(32, 44);
  const tag = bytes.subarray(44, 60);
  const privateKey = createPrivateKey({
    key: {
      kty: "OKP",
      crv: "X25519",
      d: Buffer.from(keyPair.privateKey, "base64").toString("base64url"),
      x: Buffer.from(keyPair.publicKey, "base64").toString("base64url"),
    },
    format: "jwk",
  });
  const key = keyFor(
    diffieHellman({ privateKey, publicKey: publicKeyOf(ephRaw.toString("base64")) }),
    ephRaw,
    Buffer.from(keyPair.publicKey, "base64"),
  );
  const decipher = createDecipheriv("chacha20-poly1305", key, nonce, { authTagLength: 16 });
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(bytes.subarray(60)), decipher.final()]).toString("utf8");
}

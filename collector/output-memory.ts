import { createHash } from "node:crypto";

/** What storing one command's output came to, remembered by the hash of the output as the session printed it. */
export type RememberedOutput = {
  /** The rules it was stored by (rulesKey). */
  rules: string;
  /** SHA-256 of the session's output as it came (for a shell's, before terminal cleaning), before any filter or secret rule. */
  raw: string;
  /** The stored version's significant hash after storing it (what the next download is compared with). */
  significantHash: string;
  /** Bytes of the stored text (the job result's `bytes`). */
  size: number;
};

// Base64, not hex: a large fleet's memory holds hundreds of thousands of these.
export const rawHash = (output: string) => createHash("sha256").update(output).digest("base64");

/**
 * The rules an output is stored by, as one key: the template's text (its filters, secret rules, config checks)
 * and the compare exclusions. A remembered output counts only under the same rules.
 */
export const rulesKey = (templateCode: string, exclusions: unknown) =>
  createHash("sha256").update(templateCode).update("\0").update(JSON.stringify(exclusions)).digest("base64");

/**
 * The last output the store thread stored for each device's command, so that a download printing exactly the
 * same bytes again (the nightly backup of a configuration nobody changed) is recognised by one hash of what the
 * session printed, instead of filtering it, taking its secrets out, normalising and hashing it again (about
 * 2 ms of CPU per 100 KB). Kept in memory only: after a restart each output is stored the long way once.
 * Bounded: past `limit` entries (some 300 bytes each) the least recently stored are forgotten.
 */
export class OutputMemory {
  private readonly entries = new Map<string, RememberedOutput>();

  constructor(private readonly limit: number) {}

  private static key(deviceId: number, command: string) {
    return `${deviceId}\0${command}`;
  }

  /** What storing this command's output came to, if that output was stored under the same rules. */
  get(deviceId: number, command: string, rules: string): RememberedOutput | undefined {
    const remembered = this.entries.get(OutputMemory.key(deviceId, command));
    return remembered?.rules === rules ? remembered : undefined;
  }

  set(deviceId: number, command: string, output: RememberedOutput): void {
    const key = OutputMemory.key(deviceId, command);
    this.entries.delete(key);
    this.entries.set(key, output);
    // A Map iterates in insertion order, and set() re-inserts: the first key is the least recently stored.
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
  }
}

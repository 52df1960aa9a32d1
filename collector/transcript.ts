import { maskSecrets } from "../src/modules/templates/index.ts";
import type { ConnectionTemplate } from "../src/modules/templates/index.ts";
import type { Login } from "./plan.ts";
import { renderTerminal } from "./terminal.ts";

/**
 * A session's transcript, for a person debugging a device (svc device:debug prints it live; a failed download
 * keeps it in its job's result): each line the device printed, rendered as a terminal shows it, and each line
 * sent as `[sent] ...`. Secrets never appear: a password sent (login, enable) is written as <secret hidden>, the
 * login's secrets are replaced wherever the device echoes them, and the template's secret rules run over each line
 * (live) and over the whole kept text (so rules spanning lines apply to what is kept).
 */

/** What a failed download keeps of its transcript: its end, where the failure is. */
export const TRANSCRIPT_KEPT_BYTES = 32 * 1024;
/** What is held while the session runs, before masking as a whole and keeping the end. */
const HELD_BYTES = 256 * 1024;
const HIDDEN = "<secret hidden>";

export class Transcript {
  /** What arrived and was sent, as it came (rendered only when read: a download pays for no more than keeping it). */
  private parts: string[] = [];
  private held = 0;
  /** The live line still arriving (live transcripts only). */
  private pending = "";
  private readonly secrets: string[];

  constructor(
    private readonly template: Pick<ConnectionTemplate, "secrets">,
    login: Login,
    private readonly live?: (line: string) => void,
  ) {
    // Longest first, so a secret that contains another is replaced whole.
    this.secrets = [login.password, login.enablePassword, login.passphrase]
      .filter((s): s is string => !!s && s.length >= 3)
      .sort((a, b) => b.length - a.length);
  }

  /** What the device sent, as it arrived. */
  received(chunk: string): void {
    this.keep(chunk);
    if (!this.live) return;
    this.pending += chunk;
    let nl: number;
    while ((nl = this.pending.indexOf("\n")) >= 0) {
      this.print(this.pending.slice(0, nl));
      this.pending = this.pending.slice(nl + 1);
    }
  }

  /** A line sent to the device; `secret` ones (passwords) are never written. */
  sent(line: string, secret = false): void {
    const text = `[sent] ${secret ? HIDDEN : line}`;
    this.keep(`\n${text}\n`);
    if (!this.live) return;
    if (this.pending) this.print(this.pending);
    this.pending = "";
    this.print(text);
  }

  /** The transcript's end (at most TRANSCRIPT_KEPT_BYTES, from a line start), rendered and masked as a whole. */
  text(): string {
    const all = this.mask(renderTerminal(this.parts.join("")).replace(/\n{2,}/g, "\n"));
    if (all.length <= TRANSCRIPT_KEPT_BYTES) return all;
    const end = all.slice(-TRANSCRIPT_KEPT_BYTES);
    return end.slice(end.indexOf("\n") + 1);
  }

  /** The text with the template's secret rules applied and the login's secrets replaced (for last_lines too). */
  mask(text: string): string {
    return this.secrets.reduce((t, s) => t.split(s).join(HIDDEN), maskSecrets(text, this.template.secrets));
  }

  private keep(text: string): void {
    this.parts.push(text);
    this.held += text.length;
    if (this.held <= 2 * HELD_BYTES) return;
    // Past twice the bound, everything is joined once and cut to its end: linear in what arrived, however small the chunks.
    const end = this.parts.join("").slice(-HELD_BYTES);
    this.parts = [end];
    this.held = end.length;
  }

  private print(line: string): void {
    this.live!(this.mask(renderTerminal(line)));
  }
}

import type { JobOutcome } from "../src/db/schema/index.ts";
import { renderLine, renderTerminal, stripAnsi } from "./terminal.ts";

/** What the engine needs to know about a device family's CLI; built from a connection template. */
export type SessionProfile = {
  /** Matched against the last line of the stream (the tail), never against a single chunk. */
  prompt: RegExp;
  pager?: { pattern: RegExp; answer: string };
  login?: { usernamePrompt: RegExp; passwordPrompt: RegExp };
  enable?: { command: string; passwordPrompt: RegExp; prompt?: RegExp };
  lineEnding: string;
};

export type SessionLimits = {
  /** Longest silence allowed while waiting for a prompt: a device that stalls mid-output fails here. */
  idleTimeoutMs: number;
  /** Largest output one command may produce before the session gives up on it. */
  maxOutputBytes: number;
};

export const DEFAULT_LIMITS: SessionLimits = { idleTimeoutMs: 30_000, maxOutputBytes: 32 * 1024 * 1024 };

/** A byte stream to and from the device: an SSH shell channel, or a Telnet socket after option negotiation. */
export interface Channel {
  write(data: string): void;
  onData(listener: (chunk: string) => void): void;
  onClose(listener: (error?: Error) => void): void;
}

/** A failure with the outcome it stands for, and the last lines seen (what a user needs to fix a template). */
export class SessionError extends Error {
  constructor(readonly outcome: JobOutcome, message: string, readonly lastLines: string[] = []) {
    super(message);
  }
}

type Waiter = {
  matchers: { name: string; test(line: string): boolean }[];
  resolve(found: { name: string; before: string; line: string }): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
};

const LAST_LINES = 10;

/** An interactive CLI session over a Channel: waits for prompts, answers pagers, runs commands. */
export class ShellSession {
  private buffer = "";
  private waiter: Waiter | undefined;
  private closed: Error | undefined;

  constructor(private readonly channel: Channel, private readonly profile: SessionProfile, private readonly limits: SessionLimits = DEFAULT_LIMITS) {
    channel.onData((chunk) => this.receive(chunk));
    channel.onClose((error) => {
      this.closed = error ?? new Error("the device closed the connection");
      this.fail(new SessionError("error", `the device closed the connection${error ? `: ${error.message}` : ""}`, this.lastLines()));
    });
  }

  /** The last lines received, cleaned, for error reports. */
  lastLines(): string[] {
    return renderTerminal(this.buffer).split("\n").filter((l) => l.trim()).slice(-LAST_LINES);
  }

  private tail(): string {
    const text = this.buffer.slice(this.buffer.lastIndexOf("\n") + 1);
    return stripAnsi(text);
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    const waiter = this.waiter;
    if (!waiter) return;
    clearTimeout(waiter.timer);
    if (this.buffer.length > this.limits.maxOutputBytes) {
      this.fail(new SessionError("error", `the output exceeded ${Math.round(this.limits.maxOutputBytes / 1048576)} MB; the device may be looping`, []));
      return;
    }
    const line = this.tail();
    const rendered = renderLine(line.replace(/^\r+/, ""));
    // The pager is answered and its prompt removed, so the command's output has no pager debris.
    if (this.profile.pager && this.profile.pager.pattern.test(line)) {
      this.buffer = this.buffer.slice(0, this.buffer.lastIndexOf("\n") + 1);
      this.channel.write(this.profile.pager.answer);
      waiter.timer = this.armTimer();
      return;
    }
    for (const m of waiter.matchers) {
      if (m.test(line) || m.test(rendered)) {
        const cut = this.buffer.lastIndexOf("\n") + 1;
        const found = { name: m.name, before: this.buffer.slice(0, cut), line: rendered };
        this.buffer = "";
        this.waiter = undefined;
        waiter.resolve(found);
        return;
      }
    }
    waiter.timer = this.armTimer();
  }

  private armTimer() {
    return setTimeout(() => {
      this.fail(new SessionError("prompt_not_found", `no prompt within ${this.limits.idleTimeoutMs / 1000} s of silence; check the template's prompt`, this.lastLines()));
    }, this.limits.idleTimeoutMs);
  }

  private fail(error: Error): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = undefined;
    clearTimeout(waiter.timer);
    waiter.reject(error);
  }

  /** Waits until the tail matches one of the patterns; the text before that line is returned. */
  waitFor(matchers: Waiter["matchers"]): Promise<{ name: string; before: string; line: string }> {
    if (this.closed) return Promise.reject(new SessionError("error", "the connection is closed", this.lastLines()));
    if (this.waiter) throw new Error("ShellSession: one wait at a time");
    return new Promise((resolve, reject) => {
      this.waiter = { matchers, resolve, reject, timer: this.armTimer() };
      // What already arrived may hold the match.
      if (this.buffer) this.receive("");
    });
  }

  private promptMatcher(prompt = this.profile.prompt) {
    return { name: "prompt", test: (line: string) => prompt.test(line) };
  }

  async expectPrompt(): Promise<string> {
    return (await this.waitFor([this.promptMatcher()])).before;
  }

  send(line: string): void {
    this.channel.write(line + this.profile.lineEnding);
  }

  /** Username/password prompts in the stream (Telnet, or SSH servers that ask inside the shell). */
  async login(username: string, password: string): Promise<void> {
    const login = this.profile.login;
    if (!login) return void (await this.expectPrompt());
    const matchers = [
      this.promptMatcher(),
      { name: "username", test: (l: string) => login.usernamePrompt.test(l) },
      { name: "password", test: (l: string) => login.passwordPrompt.test(l) },
    ];
    let sentPassword = false;
    let sentUsername = false;
    for (;;) {
      const found = await this.waitFor(matchers);
      if (found.name === "prompt") return;
      if (found.name === "username") {
        if (sentPassword || sentUsername) throw new SessionError("auth_failed", "the device asked for the username again: the credentials were refused");
        this.send(username);
        sentUsername = true;
      } else {
        if (sentPassword) throw new SessionError("auth_failed", "the device asked for the password again: the credentials were refused");
        this.send(password);
        sentPassword = true;
      }
    }
  }

  /** Enters privileged mode with its own password. */
  async enable(password: string): Promise<void> {
    const enable = this.profile.enable;
    if (!enable) return;
    this.send(enable.command);
    const passwordPrompt = { name: "password", test: (l: string) => enable.passwordPrompt.test(l) };
    let found = await this.waitFor([passwordPrompt, this.promptMatcher(enable.prompt)]);
    if (found.name === "password") {
      this.send(password);
      found = await this.waitFor([passwordPrompt, this.promptMatcher(enable.prompt)]);
      if (found.name === "password") throw new SessionError("auth_failed", "the enable password was refused");
    }
  }

  /** Runs one command and returns exactly its output: no echo, no prompt, no pager debris. */
  async run(command: string): Promise<string> {
    this.send(command);
    const raw = await this.expectPrompt();
    return cleanCommandOutput(raw, command);
  }
}

/** Removes the echoed command line and renders the rest as a terminal would. */
export function cleanCommandOutput(raw: string, command: string): string {
  const lines = renderTerminal(raw).split("\n");
  if (lines.length && lines[0]!.trim().endsWith(command.trim())) lines.shift();
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  return lines.length ? lines.join("\n") + "\n" : "";
}

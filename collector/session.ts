import type { JobOutcome } from "../src/db/schema/index.ts";
import { renderLine, renderTerminal, stripAnsi } from "./terminal.ts";
import type { Transcript } from "./transcript.ts";

/** A template's pattern (src/kernel/patterns), or a RegExp in tests: all the session asks of one is a test of a line. */
type LinePattern = { test(line: string): boolean };

/** What the engine needs to know about a device family's CLI; built from a connection template. */
export type SessionProfile = {
  /** Matched against the last line of the stream (the tail), never against a single chunk. */
  prompt: LinePattern;
  pager?: { pattern: LinePattern; answer: string };
  login?: { usernamePrompt: LinePattern; passwordPrompt: LinePattern };
  enable?: { command: string; passwordPrompt: LinePattern; prompt?: LinePattern };
  lineEnding: string;
};

export type SessionLimits = {
  /** Longest silence allowed while waiting for a prompt: a device that stalls mid-output fails here. */
  idleTimeoutMs: number;
  /** Largest output one command may produce before the session gives up on it. */
  maxOutputBytes: number;
  /** Silence after which an optional command (template-schema.ts) is given up and skipped. */
  optionalIdleTimeoutMs: number;
};

export const DEFAULT_LIMITS: SessionLimits = {
  idleTimeoutMs: 30_000,
  maxOutputBytes: 32 * 1024 * 1024,
  optionalIdleTimeoutMs: 5_000,
};

/** A byte stream to and from the device: an SSH shell channel, or a Telnet socket after option negotiation. */
export interface Channel {
  write(data: string): void;
  onData(listener: (chunk: string) => void): void;
  onClose(listener: (error?: Error) => void): void;
}

/** A failure with the outcome it stands for, and the last lines seen (what a user needs to fix a template). */
export class SessionError extends Error {
  constructor(
    readonly outcome: JobOutcome,
    message: string,
    readonly lastLines: string[] = [],
  ) {
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
/** Only this much of the end of the stream is rendered for last_lines, however much output there was. */
const LAST_LINES_BYTES = 16 * 1024;
/** Prompts and pagers are short: patterns see at most this much of an endless line. */
const TAIL_BYTES = 4096;
/**
 * Silence after which a pager prompt on one of the last lines, rather than the last, is answered: a V-SOL OLT
 * prints its log messages into the session, also right after " --More-- ", and then waits for the key.
 */
const INTERRUPTED_PAGER_MS = 1000;
/** How many of the last complete lines are looked at for such a pager prompt. */
const INTERRUPTED_PAGER_LINES = 10;

/**
 * The text received since the last match, kept as the chunks it arrived in. Appending to one string and
 * searching it for the last newline made V8 copy the whole output on every chunk: a 32 MB configuration
 * took many seconds of CPU, all other sessions waiting. Here each chunk is looked at once.
 */
class Received {
  private parts: string[] = [];
  length = 0;
  /** Length of the unfinished last line (the text after the last "\n"). */
  private lineLength = 0;
  /** The end of that line, at most TAIL_BYTES: what prompt and pager patterns are matched against. */
  line = "";

  push(chunk: string): void {
    if (!chunk) return;
    this.parts.push(chunk);
    this.length += chunk.length;
    const nl = chunk.lastIndexOf("\n");
    if (nl < 0) {
      this.lineLength += chunk.length;
      this.line = (this.line + chunk).slice(-TAIL_BYTES);
    } else {
      this.lineLength = chunk.length - nl - 1;
      this.line = chunk.slice(nl + 1).slice(-TAIL_BYTES);
    }
  }

  /** Everything up to and including the last "\n". */
  completeLines(): string {
    const all = this.parts.join("");
    return all.slice(0, all.length - this.lineLength);
  }

  /** Removes the last `count` characters of the unfinished last line (a pager prompt), keeping the text before them. */
  dropLineEnd(count: number): void {
    let n = Math.min(count, this.lineLength);
    this.length -= n;
    this.lineLength -= n;
    this.line = this.line.slice(0, Math.max(0, this.line.length - n));
    while (n > 0) {
      const last = this.parts.pop()!;
      if (last.length > n) this.parts.push(last.slice(0, last.length - n));
      n -= Math.min(n, last.length);
    }
  }

  /** About the last `bytes` characters, from a line start where there is one. */
  end(bytes: number): string {
    const picked: string[] = [];
    let n = 0;
    for (let i = this.parts.length - 1; i >= 0 && n < bytes; i--) {
      picked.push(this.parts[i]!);
      n += this.parts[i]!.length;
    }
    const text = picked.reverse().join("");
    if (text.length <= bytes) return text;
    const cut = text.slice(-bytes);
    return cut.slice(cut.indexOf("\n") + 1);
  }

  /** Keeps only the last `bytes` characters. */
  trim(bytes: number): void {
    const text = this.end(bytes);
    const { lineLength, line } = this;
    this.clear();
    this.parts.push(text);
    this.length = text.length;
    this.lineLength = Math.min(lineLength, text.length);
    this.line = line;
  }

  /**
   * Removes the last of the last INTERRUPTED_PAGER_LINES complete lines that the pager pattern takes (escape codes
   * aside), with its line end; says whether there was one. Only a silent device is asked this, so the rebuild of
   * the buffer is rare.
   */
  dropInterruptedPager(pager: { test(line: string): boolean }): boolean {
    const tail = this.end(TAIL_BYTES);
    const complete = tail.slice(0, tail.length - Math.min(this.lineLength, tail.length));
    const lines = complete.split("\n").slice(0, -1);
    const from = Math.max(0, lines.length - INTERRUPTED_PAGER_LINES);
    for (let i = lines.length - 1; i >= from; i--) {
      if (!pager.test(stripAnsi(lines[i]!))) continue;
      // The offset of that line from the end of the buffer: the lines after it, and the unfinished last line.
      const after = lines.slice(i + 1).reduce((n, l) => n + l.length + 1, 0) + (tail.length - complete.length);
      const all = this.parts.join("");
      const start = all.length - after - lines[i]!.length - 1;
      const text = all.slice(0, start) + all.slice(start + lines[i]!.length + 1);
      this.parts = [text];
      this.length = text.length;
      return true;
    }
    return false;
  }

  clear(): void {
    this.parts = [];
    this.length = 0;
    this.lineLength = 0;
    this.line = "";
  }
}

/**
 * How devices erase a pager prompt once answered: backspaces over it, blanks, backspaces again (IOS); a carriage
 * return, blanks and another carriage return; or ANSI cursor-left / erase-line sequences. Indentation after
 * the erase is output and stays.
 */
const PAGER_ERASE = /^(?:\x08+ *\x08*|\r *\r|\x1b\[[0-9;]*[DKG]\r?)+/;

/**
 * How many characters at the end of the raw last line the pager prompt takes: the shortest end the pager
 * pattern matches (with ANSI codes removed), and the blanks that pad it (" --More-- "), so the text before the
 * prompt stays.
 */
function pagerLength(rawLine: string, pattern: LinePattern): number {
  let n = 1;
  while (n < rawLine.length && !pattern.test(stripAnsi(rawLine.slice(rawLine.length - n)))) n++;
  while (n < rawLine.length && (rawLine[rawLine.length - n - 1] === " " || rawLine[rawLine.length - n - 1] === "\t"))
    n++;
  return n;
}

/** An interactive CLI session over a Channel: waits for prompts, answers pagers, runs commands. */
export class ShellSession {
  private readonly buffer = new Received();
  private waiter: Waiter | undefined;
  private closed: Error | undefined;
  /** Once the template's prompt has matched, silence is the device stalling, not a prompt the template misses. */
  private promptSeen = false;
  /** The command whose output is awaited, for error messages. */
  private command: string | undefined;
  /** The silence allowed for the wait under way: an optional command's is shorter. */
  private idleTimeoutMs: number;
  /** A pager was just answered: what arrives next may start with the sequence that erases its prompt. */
  private afterPager = false;
  /** What the device printed before its first prompt (after the login over Telnet), and that prompt: detection reads them. */
  greeting: { banner: string; prompt: string } | undefined;
  /** What ends each line sent: the profile's, unless detection asks a family the way it listens (withLineEnding). */
  private lineEnding: string;

  constructor(
    private readonly channel: Channel,
    private readonly profile: SessionProfile,
    private readonly limits: SessionLimits = DEFAULT_LIMITS,
    /** Told everything received and sent (collector/transcript.ts). */
    private readonly transcript?: Transcript,
  ) {
    this.idleTimeoutMs = limits.idleTimeoutMs;
    this.lineEnding = profile.lineEnding;
    channel.onData((chunk) => {
      this.transcript?.received(chunk);
      this.receive(chunk);
    });
    channel.onClose((error) => {
      this.closed = error ?? new Error("the device closed the connection");
      // Every session ends this way after its teardown: the report is built only for a command still waiting.
      if (!this.waiter) return;
      const during = this.command === undefined ? "" : ` while '${this.command}' was running; its output is incomplete`;
      this.fail(
        new SessionError(
          "error",
          `the device closed the connection${during}${error ? `: ${error.message}` : ""}`,
          this.lastLines(),
        ),
      );
    });
  }

  /** The last lines received, cleaned, for error reports. */
  lastLines(): string[] {
    return renderTerminal(this.buffer.end(LAST_LINES_BYTES))
      .split("\n")
      .filter((l) => l.trim())
      .slice(-LAST_LINES);
  }

  private receive(chunk: string): void {
    if (this.afterPager && chunk) {
      // The sequence that erases the pager prompt from the screen; its prompt is gone from the buffer already,
      // so applied there it would erase the text before it (or, as "\r", overwrite the line) instead.
      chunk = chunk.replace(PAGER_ERASE, "");
      if (chunk) this.afterPager = false;
    }
    this.buffer.push(chunk);
    if (this.buffer.length > this.limits.maxOutputBytes) {
      const what = this.command === undefined ? "the output" : `the output of '${this.command}'`;
      const error = new SessionError(
        "error",
        `${what} exceeded ${Math.round(this.limits.maxOutputBytes / 1048576)} MB; the device may be looping`,
        this.lastLines(),
      );
      // Whatever still arrives before the connection closes is kept only as far as last_lines needs it.
      this.buffer.trim(LAST_LINES_BYTES);
      this.fail(error);
      return;
    }
    const waiter = this.waiter;
    if (!waiter) return;
    clearTimeout(waiter.timer);
    const line = stripAnsi(this.buffer.line);
    const rendered = renderLine(line.replace(/^\r+/, ""));
    // The pager is answered and its prompt removed, so the command's output has no pager debris. Only the
    // prompt goes: a device that pages by bytes shows it mid-line ("read systemvi--More--"), and the text
    // before it is output, continued after the answer.
    const pager = this.profile.pager;
    if (pager && pager.pattern.test(line)) {
      this.buffer.dropLineEnd(pagerLength(this.buffer.line, pager.pattern));
      this.afterPager = true;
      this.channel.write(pager.answer);
      waiter.timer = this.armTimer();
      return;
    }
    for (const m of waiter.matchers) {
      if (m.test(line) || m.test(rendered)) {
        const found = { name: m.name, before: this.buffer.completeLines(), line: rendered };
        if (m.name === "prompt" && !this.promptSeen)
          this.greeting = { banner: renderTerminal(found.before), prompt: rendered };
        if (m.name === "prompt") this.promptSeen = true;
        this.buffer.clear();
        this.waiter = undefined;
        waiter.resolve(found);
        return;
      }
    }
    waiter.timer = this.armTimer();
  }

  /**
   * The silence timer of a wait. With a pager, after INTERRUPTED_PAGER_MS of silence it first looks for a pager
   * prompt that a message the device printed on its own (a log line) pushed off the last line, and answers it.
   */
  private armTimer(): ReturnType<typeof setTimeout> {
    const pager = this.profile.pager;
    if (!pager || INTERRUPTED_PAGER_MS >= this.idleTimeoutMs) return this.silenceTimer(this.idleTimeoutMs);
    return setTimeout(() => {
      const waiter = this.waiter;
      if (!waiter) return;
      if (this.buffer.dropInterruptedPager(pager.pattern)) {
        this.afterPager = true;
        this.channel.write(pager.answer);
        waiter.timer = this.armTimer();
      } else waiter.timer = this.silenceTimer(this.idleTimeoutMs - INTERRUPTED_PAGER_MS);
    }, INTERRUPTED_PAGER_MS);
  }

  private silenceTimer(ms: number) {
    return setTimeout(() => {
      const seconds = this.idleTimeoutMs / 1000;
      if (!this.promptSeen) {
        this.fail(
          new SessionError(
            "prompt_not_found",
            `no prompt within ${seconds} s of silence; check the template's prompt`,
            this.lastLines(),
          ),
        );
        return;
      }
      // The prompt matched earlier in this session, so the template fits the device: it stopped answering.
      // A pager or question the template does not know looks the same, hence the hint.
      const during = this.command === undefined ? "" : ` while running '${this.command}'`;
      this.fail(
        new SessionError(
          "timeout",
          `the device went silent for ${seconds} s${during} without returning to its prompt; if the last lines end in a pager or question, add it to the template`,
          this.lastLines(),
        ),
      );
    }, ms);
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
      if (this.buffer.length) this.receive("");
    });
  }

  private promptMatcher(prompt = this.profile.prompt) {
    return { name: "prompt", test: (line: string) => prompt.test(line) };
  }

  /** Whether a line is the template's prompt (for callers that wait for it among other patterns). */
  isPrompt(line: string): boolean {
    return this.profile.prompt.test(line);
  }

  async expectPrompt(): Promise<string> {
    return (await this.waitFor([this.promptMatcher()])).before;
  }

  /** Sends one line; a `secret` one (a password) is never written to the transcript. */
  send(line: string, secret = false): void {
    this.transcript?.sent(line, secret);
    this.channel.write(line + this.lineEnding);
  }

  /** Runs `work` with lines sent ending in `ending` (detection, asking a family whose template sets line_ending). */
  async withLineEnding<T>(ending: string, work: () => Promise<T>): Promise<T> {
    const before = this.lineEnding;
    this.lineEnding = ending;
    try {
      return await work();
    } finally {
      this.lineEnding = before;
    }
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
        if (sentPassword || sentUsername)
          throw new SessionError(
            "auth_failed",
            "the device asked for the username again: the credentials were refused",
          );
        this.send(username);
        sentUsername = true;
      } else {
        if (sentPassword)
          throw new SessionError(
            "auth_failed",
            "the device asked for the password again: the credentials were refused",
          );
        this.send(password, true);
        sentPassword = true;
      }
    }
  }

  /** Enters privileged mode with its own password; `how` replaces the profile's way (detection picks a family's). */
  async enable(password: string, how = this.profile.enable): Promise<void> {
    const enable = how;
    if (!enable) return;
    this.send(enable.command);
    const passwordPrompt = { name: "password", test: (l: string) => enable.passwordPrompt.test(l) };
    let found = await this.waitFor([passwordPrompt, this.promptMatcher(enable.prompt)]);
    if (found.name === "password") {
      this.send(password, true);
      found = await this.waitFor([passwordPrompt, this.promptMatcher(enable.prompt)]);
      if (found.name === "password") throw new SessionError("auth_failed", "the enable password was refused");
    }
  }

  /** Runs one command and returns exactly its output: no echo, no prompt, no pager debris. */
  async run(command: string): Promise<string> {
    return cleanCommandOutput(await this.print(command), command);
  }

  /**
   * Runs one command and returns what the device printed before the next prompt, its echo and terminal codes
   * included: cleanCommandOutput(printed, command) is its output. A download leaves that to the store thread
   * (rendering a 100 KB configuration costs this thread, which every session shares, about 0.4 ms).
   */
  async print(command: string): Promise<string> {
    this.command = command;
    this.send(command);
    const printed = await this.expectPrompt();
    this.command = undefined;
    return printed;
  }

  /**
   * Runs a command the backup can do without: it may stay silent only for the short optional timeout. When it
   * does, an empty line brings the prompt back (within the normal timeout) and the session goes on. Returns what
   * it printed (as print() does), or the SessionError it failed with; a closed connection still fails the session.
   */
  async runOptional(command: string): Promise<{ printed: string } | { error: SessionError }> {
    this.idleTimeoutMs = Math.min(this.limits.optionalIdleTimeoutMs, this.limits.idleTimeoutMs);
    try {
      return { printed: await this.print(command) };
    } catch (err) {
      if (!(err instanceof SessionError) || this.closed) throw err;
      this.command = undefined;
      this.idleTimeoutMs = this.limits.idleTimeoutMs;
      this.buffer.clear();
      this.send("");
      await this.expectPrompt();
      return { error: err };
    } finally {
      this.idleTimeoutMs = this.limits.idleTimeoutMs;
    }
  }
}

/** Removes the echoed command line and renders the rest as a terminal would. */
export function cleanCommandOutput(raw: string, command: string): string {
  let text = renderTerminal(raw);
  const firstEnd = text.indexOf("\n");
  if ((firstEnd < 0 ? text : text.slice(0, firstEnd)).trim().endsWith(command.trim()))
    text = firstEnd < 0 ? "" : text.slice(firstEnd + 1);
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
  return end ? text.slice(0, end) + "\n" : "";
}

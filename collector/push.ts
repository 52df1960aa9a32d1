import { compileTemplatePattern } from "../src/modules/templates/index.ts";
import { maskSecrets } from "../src/modules/templates/index.ts";
import type { ConnectionTemplate, PushSection } from "../src/modules/templates/index.ts";
import { inShell, type Progress, type Target } from "./collect.ts";
import { cleanCommandOutput, SessionError, type ShellSession } from "./session.ts";
import { pushOverNetconf } from "./netconf/push.ts";

/**
 * A push: snippet lines sent to one device through the same session engine as downloads (collect.ts inShell:
 * SSH shell or Telnet, the template's prompt, pager and enable), following the template's `push` section
 * (template-schema.ts). It needs no database: the caller records the outcome.
 *
 * CONTRACT for the service side (changes are noted here):
 * - `pushLines({ target, limits, connectTimeoutMs }, request, signal, progress)`. `target` is a download's Plan
 *   without commands ({ device, template, login }): build `login` from the device's snippet credentials.
 * - Never throws for the device's sake: a connection, login or timeout failure is `status: "error"` with the
 *   job outcome it stands for (`outcome`: unreachable, auth_failed, timeout, ...); `progress.connected` says
 *   whether the device answered at all. A line or save step the device refused is `status: "failed"`.
 * - `failedLine.index` is the index in `request.lines`; a refused enter or save step has `stage` "enter"/"save"
 *   and index -1. `line` and `answer` are masked like the transcript.
 * - `rolledBack`: present when a rollback was asked for and the push failed; true when every rollback line was taken.
 * - `fingerprint`: the host key the session saw (SSH), for pinning as a download does.
 * - The transcript is "> line" for each line sent, followed by the device's answer, secrets masked with the
 *   template's `secrets` rules and the login's passwords.
 * - `saved`: the save steps ran and were taken. Families without save steps (FortiOS, RouterOS, Linux) apply and
 *   keep each line as it is taken: there `saved` is false, and lines taken before a failure stay in effect.
 * - `linesNotInConfig(template, lines, afterConfig)`: the lines to flag after the after-download (templates with
 *   push.verify_lines; [] for the others). `afterConfig` is the stored text of the template's config_command.
 */
export type { PushConnection, PushOutcome, PushRequest } from "./push-types.ts";
import type { PushConnection, PushOutcome, PushRequest } from "./push-types.ts";

type LinePattern = { test(line: string): boolean };

/** The push section compiled: patterns as the session tests them. */
type PushProfile = { section: PushSection; errors: LinePattern[]; prompts: { pattern: LinePattern; answer: string }[] };

/** Compiled once per parsed template (template-cache.ts keeps one parse per template text). */
const compiledProfiles = new WeakMap<PushSection, PushProfile>();

function pushProfileOf(section: PushSection): PushProfile {
  let profile = compiledProfiles.get(section);
  if (!profile) {
    const line = (source: string) => compileTemplatePattern(source, "line");
    profile = {
      section,
      errors: section.errors.map(line),
      prompts: section.prompts.map((p) => ({ pattern: line(p.pattern), answer: p.answer })),
    };
    compiledProfiles.set(section, profile);
  }
  return profile;
}

/** Writes what was sent and what came back, masked as stored configurations are. */
class Transcript {
  private readonly parts: string[] = [];
  constructor(
    private readonly template: ConnectionTemplate,
    private readonly literals: string[],
  ) {}

  mask(text: string): string {
    let masked = maskSecrets(text, this.template.secrets);
    for (const secret of this.literals) masked = masked.split(secret).join("<secret hidden>");
    return masked;
  }

  add(line: string, answer: string): void {
    this.parts.push(`> ${this.mask(line)}\n`, this.mask(answer));
  }

  text(): string {
    return this.parts.join("");
  }
}

/** A line sent: whether the device took it, and what it answered (echo removed, as a terminal shows it). */
type Step = { taken: boolean; answer: string };

/**
 * Sends one line and waits for the prompt, answering the template's questions on the way; the line is refused
 * when a line of the answer matches an error pattern.
 */
async function sendLine(session: ShellSession, profile: PushProfile, line: string): Promise<Step> {
  const matchers = [
    ...profile.prompts.map((p, i) => ({ name: `question ${i}`, test: (l: string) => p.pattern.test(l) })),
    { name: "prompt", test: (l: string) => session.isPrompt(l) },
  ];
  session.send(line);
  let raw = "";
  for (;;) {
    const found = await session.waitFor(matchers);
    if (found.name === "prompt") {
      raw += found.before;
      break;
    }
    raw += found.before + found.line + "\n";
    session.send(profile.prompts[Number(found.name.slice("question ".length))]!.answer);
  }
  const answer = cleanCommandOutput(raw, line);
  const refused = answer.split("\n").some((l) => profile.errors.some((e) => e.test(l)));
  return { taken: !refused, answer };
}

/** Sends lines in order until one is refused: its index, or -1 when all were taken. */
async function sendAll(
  session: ShellSession,
  profile: PushProfile,
  transcript: Transcript,
  lines: readonly string[],
): Promise<{ index: number; answer: string }> {
  for (const [index, line] of lines.entries()) {
    const step = await sendLine(session, profile, line);
    transcript.add(line, step.answer);
    if (!step.taken) return { index, answer: step.answer };
  }
  return { index: -1, answer: "" };
}

/** Leaves configuration mode without saving; what the device says is only recorded. */
async function discard(session: ShellSession, profile: PushProfile, transcript: Transcript): Promise<void> {
  for (const line of profile.section.discard) transcript.add(line, (await sendLine(session, profile, line)).answer);
}

/**
 * The rollback snippet after a failed push: entered and sent like a push; saved when the family's lines take
 * effect only when saved (candidate), else left in the running configuration, so nothing is saved that was not.
 */
async function rollBack(
  session: ShellSession,
  profile: PushProfile,
  transcript: Transcript,
  lines: readonly string[],
): Promise<boolean> {
  const { section } = profile;
  if ((await sendAll(session, profile, transcript, section.enter)).index >= 0) return false;
  const refused = (await sendAll(session, profile, transcript, lines)).index >= 0;
  if (refused || !section.candidate) {
    await discard(session, profile, transcript);
    return !refused;
  }
  return (await sendAll(session, profile, transcript, section.save)).index < 0;
}

async function pushInSession(
  session: ShellSession,
  target: Target,
  profile: PushProfile,
  request: PushRequest,
  transcript: Transcript,
): Promise<PushOutcome> {
  const { template, login } = target;
  const { section } = profile;
  if (template.enable && login.enablePassword) await session.enable(login.enablePassword);
  const failed = async (
    stage: "enter" | "line" | "save",
    index: number,
    line: string,
    answer: string,
  ): Promise<PushOutcome> => {
    // A refused enter step left nothing to discard; a refused save step may have left configuration mode, and discarding is harmless.
    if (stage !== "enter") await discard(session, profile, transcript);
    const rolledBack = request.rollbackLines?.length
      ? await rollBack(session, profile, transcript, request.rollbackLines)
      : undefined;
    const where =
      stage === "line"
        ? `line ${index + 1} '${transcript.mask(line)}'`
        : `the ${stage} step '${transcript.mask(line)}'`;
    const firstAnswerLine = answer.split("\n").find((l) => profile.errors.some((e) => e.test(l))) ?? answer.trim();
    return {
      status: "failed",
      failedLine: {
        index: stage === "line" ? index : -1,
        stage,
        line: transcript.mask(line),
        answer: transcript.mask(answer),
      },
      ...(rolledBack === undefined ? {} : { rolledBack }),
      saved: false,
      transcript: "",
      message: `the device refused ${where}: ${transcript.mask(firstAnswerLine)}; nothing after it was sent and nothing was saved${
        rolledBack === undefined
          ? ""
          : rolledBack
            ? "; the rollback lines were applied"
            : "; the rollback did not complete"
      }`,
    };
  };
  const entered = await sendAll(session, profile, transcript, section.enter);
  if (entered.index >= 0) return failed("enter", -1, section.enter[entered.index]!, entered.answer);
  const sent = await sendAll(session, profile, transcript, request.lines);
  if (sent.index >= 0) return failed("line", sent.index, request.lines[sent.index]!, sent.answer);
  if (!request.save) {
    await discard(session, profile, transcript);
    return {
      status: "success",
      saved: false,
      transcript: "",
      message: `${request.lines.length} lines taken; not saved (a check)`,
    };
  }
  const saved = await sendAll(session, profile, transcript, section.save);
  if (saved.index >= 0) return failed("save", -1, section.save[saved.index]!, saved.answer);
  for (const line of template.teardown) session.send(line);
  return {
    status: "success",
    saved: section.save.length > 0,
    transcript: "",
    message: `${request.lines.length} lines taken${section.save.length ? " and saved" : ""}`,
  };
}

/** Lines that only move between modes: they never show up in a configuration. */
const MODE_LINES = new Set(["exit", "end", "quit", "return"]);

/**
 * The pushed lines that do not show up in the configuration downloaded after the push, for templates whose lines
 * show up as sent (push.verify_lines). Negations (`no ...`, `undo ...`) and mode changes are not looked for; a
 * line is compared with its secrets removed as the stored configuration has them.
 */
export function linesNotInConfig(
  template: ConnectionTemplate,
  lines: readonly string[],
  afterConfig: string,
): string[] {
  if (!template.push?.verify_lines) return [];
  const present = new Set(afterConfig.split("\n").map((l) => l.trim()));
  return lines.filter((line) => {
    const word = line.trim().split(/\s+/)[0]!;
    if (!word || MODE_LINES.has(line.trim()) || word === "no" || word === "undo") return false;
    return !present.has(maskSecrets(line, template.secrets).trim());
  });
}

/** Pushes lines to one device: see the contract at the top. */
export async function pushLines(
  connection: PushConnection,
  request: PushRequest,
  signal: AbortSignal,
  progress: Progress,
): Promise<PushOutcome> {
  const { target } = connection;
  const { template, login } = target;
  const transcript = new Transcript(
    template,
    [login.password, login.enablePassword, login.passphrase].filter((s): s is string => !!s),
  );
  if (template.protocol === "netconf") return pushOverNetconf(connection, request, signal, progress, transcript);
  if (!template.push) {
    return {
      status: "error",
      outcome: "error",
      saved: false,
      transcript: "",
      message:
        "the device's connection template has no push section, so nothing can be pushed to it; copy the template and add one (docs/collector.md: Connection templates)",
    };
  }
  const profile = pushProfileOf(template.push);
  try {
    const { result, fingerprint } = await inShell(target, connection, signal, progress, (session) =>
      pushInSession(session, target, profile, request, transcript),
    );
    return { ...result, transcript: transcript.text(), ...(fingerprint ? { fingerprint } : {}) };
  } catch (err) {
    const failure =
      err instanceof SessionError ? err : new SessionError("error", err instanceof Error ? err.message : String(err));
    const lastLines = failure.lastLines.length
      ? `\n${failure.lastLines.map((l) => transcript.mask(l)).join("\n")}`
      : "";
    return {
      status: "error",
      outcome: failure.outcome,
      saved: false,
      transcript: transcript.text() + lastLines,
      message: transcript.mask(failure.message),
    };
  }
}

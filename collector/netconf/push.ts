import { inNetconf, type Progress } from "../collect.ts";
import type { PushConnection, PushOutcome, PushRequest } from "../push-types.ts";
import { SessionError } from "../session.ts";
import type { NetconfClient } from "./client.ts";

/**
 * A snippet push over NETCONF (RFC 6241), for templates with `netconf.push` (template-schema.ts): the snippet's
 * lines, joined, are the XML inside `<config>`. In one session: `<lock>` the candidate, `<edit-config>` it (merge),
 * `<validate>` it where the device can, then `<commit>` with `<confirmed/>` and the template's timeout (the device
 * rolls back by itself if the session dies before the confirming commit) and the confirming `<commit>`; a dry check
 * (`save: false`) discards after validating. Anything the device refuses ends in `<discard-changes>`, so a failed
 * push changed nothing; the lock is released either way. Follows push.ts's contract (PushOutcome).
 */

const CANDIDATE = "urn:ietf:params:netconf:capability:candidate:1.0";
const VALIDATE = ["urn:ietf:params:netconf:capability:validate:1.1", "urn:ietf:params:netconf:capability:validate:1.0"];
const CONFIRMED_COMMIT = [
  "urn:ietf:params:netconf:capability:confirmed-commit:1.1",
  "urn:ietf:params:netconf:capability:confirmed-commit:1.0",
];

/** What push.ts's transcript offers: each step sent and what the device answered, secrets masked. */
export type PushTranscript = { add(line: string, answer: string): void; text(): string; mask(text: string): string };

type Stage = "enter" | "line" | "save";
class Refused extends Error {
  constructor(
    readonly stage: Stage,
    readonly step: string,
    message: string,
  ) {
    super(message);
  }
}

export async function pushOverNetconf(
  connection: PushConnection,
  request: PushRequest,
  signal: AbortSignal,
  progress: Progress,
  transcript: PushTranscript,
): Promise<PushOutcome> {
  const { target } = connection;
  const section = target.template.netconf?.push;
  if (!section) {
    return {
      status: "error",
      outcome: "error",
      saved: false,
      transcript: "",
      message:
        "the device's NETCONF template has no netconf.push section, so nothing can be pushed to it; copy the template and add one (docs/collector.md: NETCONF)",
    };
  }
  const snippet = request.lines.join("\n");
  try {
    const { result, fingerprint } = await inNetconf(target, connection, signal, progress, (client) =>
      pushIn(client, snippet, request.save, section.confirm_timeout_seconds, transcript),
    );
    return { ...result, transcript: transcript.text(), fingerprint };
  } catch (err) {
    const failure =
      err instanceof SessionError ? err : new SessionError("error", err instanceof Error ? err.message : String(err));
    return {
      status: "error",
      outcome: failure.outcome,
      saved: false,
      transcript: transcript.text(),
      message: transcript.mask(failure.message),
    };
  }
}

async function pushIn(
  client: NetconfClient,
  snippet: string,
  save: boolean,
  confirmTimeout: number,
  transcript: PushTranscript,
): Promise<Omit<PushOutcome, "transcript">> {
  if (!client.has(CANDIDATE)) {
    await client.close();
    return {
      status: "error",
      outcome: "error",
      saved: false,
      message:
        "the device offers no candidate datastore (:candidate), which a NETCONF push needs; push over its CLI template instead",
    };
  }
  const step = async (stage: Stage, name: string, body: string) => {
    try {
      await client.rpc(name, body);
      transcript.add(body, "<ok/>\n");
    } catch (err) {
      if (!(err instanceof SessionError) || !err.message.startsWith("the device refused")) throw err;
      transcript.add(body, `${err.message}\n`);
      throw new Refused(stage, body, err.message);
    }
  };
  let locked = false;
  let saved = false;
  try {
    await step("enter", "lock", "<lock><target><candidate/></target></lock>");
    locked = true;
    await step(
      "line",
      "edit-config",
      `<edit-config><target><candidate/></target><default-operation>merge</default-operation><config>${snippet}</config></edit-config>`,
    );
    if (VALIDATE.some((c) => client.has(c)))
      await step("save", "validate", "<validate><source><candidate/></source></validate>");
    if (!save) {
      await step("save", "discard-changes", "<discard-changes/>");
    } else if (CONFIRMED_COMMIT.some((c) => client.has(c))) {
      await step("save", "commit", `<commit><confirmed/><confirm-timeout>${confirmTimeout}</confirm-timeout></commit>`);
      await step("save", "commit", "<commit/>");
      saved = true;
    } else {
      await step("save", "commit", "<commit/>");
      saved = true;
    }
    await step("save", "unlock", "<unlock><target><candidate/></target></unlock>");
    locked = false;
    await client.close();
    return {
      status: "success",
      saved,
      message: save ? "committed (confirmed commit, then confirmed)" : "validated and discarded (dry check)",
    };
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    // Nothing of a refused push stays in the candidate, and the lock goes with it.
    await client.rpc("discard-changes", "<discard-changes/>").then(
      () => transcript.add("<discard-changes/>", "<ok/>\n"),
      () => {},
    );
    if (locked) await client.rpc("unlock", "<unlock><target><candidate/></target></unlock>").catch(() => {});
    await client.close();
    return {
      status: "failed",
      saved: false,
      failedLine: {
        index: err.stage === "line" ? 0 : -1,
        stage: err.stage,
        line: transcript.mask(err.step),
        answer: transcript.mask(err.message),
      },
      message: transcript.mask(err.message),
    };
  }
}

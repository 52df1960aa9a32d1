import { randomUUID } from "node:crypto";
import type { ResultUpload, WireJob } from "../../src/runtime/collector-api/index.ts";
import { failureReason } from "../../src/kernel/error-reason.ts";
import { open } from "../../src/platform/secrets/sealed-box.ts";
import { storedTextAndSecrets, type ConnectionTemplate } from "../../src/modules/templates/index.ts";
import { implausibleConfiguration } from "../../src/modules/templates/index.ts";
import { secretsDigest } from "../../src/modules/configs/index.ts";
import { getTableColumns } from "drizzle-orm";
import { devices } from "../../src/db/schema/index.ts";
import { collect, type Collected, type Login, type Progress } from "../collect.ts";
import type { SessionLimits } from "../session.ts";
import { SessionError } from "../session.ts";
import { templateText } from "../store-download.ts";
import { parseTemplateOnce } from "../template-cache.ts";
import { Transcript } from "../transcript.ts";

/** Device columns that are times (the wire carries them as epoch ms), read from the schema so none is missed. */
const TIME_COLUMNS = Object.entries(getTableColumns(devices))
  .filter(([, column]) => column.columnType === "SQLiteTimestamp")
  .map(([key]) => key);

export const deviceOf = (wire: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(wire).map(([k, v]) => [k, TIME_COLUMNS.includes(k) && typeof v === "number" ? new Date(v) : v]),
  ) as typeof devices.$inferSelect;

/** The zone's digest key a job carries, opened (undefined: the server sent none). */
export function digestKeyOf(job: WireJob, keyPair: { publicKey: string; privateKey: string }): Uint8Array | undefined {
  return job.sealed_digest_key
    ? new Uint8Array(Buffer.from(JSON.parse(open(keyPair, job.sealed_digest_key)) as string, "base64"))
    : undefined;
}

/**
 * A session's outputs as the server would store them: cleaned, filtered, and masked with the template's rules;
 * with `digestKey`, each output's digest of the values masking took out (never the values themselves).
 */
export function maskedOutputs(
  collected: Collected,
  template: ConnectionTemplate,
  digestKey: Uint8Array | undefined,
): Pick<ResultUpload, "outputs" | "secrets_digests"> & { outputs: [string, string][] } {
  const digests: Record<string, string> = {};
  const outputs = collected.outputs.map(([command, output]): [string, string] => {
    const { text, secrets } = storedTextAndSecrets(templateText(collected, template, command, output), template);
    if (digestKey && !template.secrets_reencrypted) digests[command] = secretsDigest(digestKey, secrets);
    return [command, text];
  });
  return { outputs, ...(digestKey && !template.secrets_reencrypted ? { secrets_digests: digests } : {}) };
}

/**
 * Runs one download job at the site, as the local collector's session does (collect.ts), then cleans, filters
 * and masks every output as the server would store it (the same template rules, store-download.ts's
 * templateText and storedTextAndSecrets): what it returns holds no secret and is all that crosses the network.
 * The login is opened from the job's sealed box and lives only in this call's memory.
 */
export async function runRemoteDownload(
  job: WireJob,
  keyPair: { publicKey: string; privateKey: string },
  session: { limits: SessionLimits; connectTimeoutMs: number },
  signal: AbortSignal,
): Promise<ResultUpload> {
  const started = Date.now();
  const upload_key = randomUUID();
  const progress: Progress = { connected: false };
  let transcript: Transcript | undefined;
  try {
    const parsed = job.template_code === null ? undefined : parseTemplateOnce(job.template_code);
    if (!parsed?.ok) throw new SessionError("error", "the device's connection template is missing or invalid; edit it");
    const template = parsed.template;
    const login = JSON.parse(open(keyPair, job.sealed_login)) as Login;
    const plan = { device: deviceOf(job.device), template, login, commands: job.commands };
    transcript = new Transcript(template, login);
    const collected = await collect({ plan, ...session, transcript }, signal, progress);
    const { outputs, secrets_digests } = maskedOutputs(collected, template, digestKeyOf(job, keyPair));
    const config = outputs.find(([command]) => command === template.config_command);
    const problem = config && implausibleConfiguration(config[1], template);
    if (problem) throw new SessionError("output_invalid", `${problem}; nothing was stored`);
    return {
      upload_key,
      job_id: job.id,
      outcome: "collected",
      outputs,
      ...(secrets_digests ? { secrets_digests } : {}),
      ...(collected.skipped.length ? { skipped: collected.skipped } : {}),
      ...(collected.fingerprint ? { fingerprint: collected.fingerprint } : {}),
      duration_ms: Date.now() - started,
    };
  } catch (err) {
    const failure = err instanceof SessionError ? err : new SessionError("error", failureReason(err).slice(0, 500));
    const kept = transcript?.text();
    return {
      upload_key,
      job_id: job.id,
      outcome: failure.outcome as ResultUpload["outcome"],
      message: failure.message,
      reached: progress.connected,
      ...(failure.lastLines.length
        ? { last_lines: transcript ? failure.lastLines.map((l) => transcript!.mask(l)) : failure.lastLines }
        : {}),
      ...(kept ? { transcript: kept } : {}),
      duration_ms: Date.now() - started,
    };
  }
}

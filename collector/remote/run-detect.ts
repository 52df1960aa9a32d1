import { randomUUID } from "node:crypto";
import type { ResultUpload, WireJob } from "../../src/runtime/collector-api/index.ts";
import { failureReason } from "../../src/kernel/error-reason.ts";
import { open } from "../../src/platform/secrets/sealed-box.ts";
import type { ConnectionTemplate } from "../../src/modules/templates/index.ts";
import type { BuiltinTemplate } from "../builtin-templates.ts";
import type { Login, Progress } from "../collect.ts";
import { detectAt, maskedLines, ownTemplateOf } from "../detect-job.ts";
import type { SessionLimits } from "../session.ts";
import { SessionError } from "../session.ts";
import { readSnmpSystemAt, type SnmpTargetOrProblem } from "../snmp.ts";
import { parseTemplateOnce } from "../template-cache.ts";
import { deviceOf } from "./run-download.ts";

/**
 * Runs one detect job at the site with the local collector's detection (detect-job.ts: detectAt): SNMP's system
 * group when the job carries a sealed agent, the login, the banner, the prompt and the built-ins' version
 * commands, matched against the built-in templates the server sent. What it returns is the proposal and what the
 * device showed; a failure's last lines are masked here as a local detection masks them. The server applies the
 * proposal and keeps the inventory (recordDetection).
 */
export async function runRemoteDetect(
  job: WireJob,
  keyPair: { publicKey: string; privateKey: string },
  session: { limits: SessionLimits; connectTimeoutMs: number },
  signal: AbortSignal,
): Promise<ResultUpload> {
  const started = Date.now();
  const upload_key = randomUUID();
  const progress: Progress = { connected: false };
  const masking: { templates: ConnectionTemplate[]; login?: Login } = { templates: [] };
  try {
    const builtins: BuiltinTemplate[] = (job.builtins ?? []).flatMap(({ id, key, code }) => {
      const parsed = parseTemplateOnce(code);
      return parsed.ok ? [{ id, key, template: parsed.template }] : [];
    });
    const device = deviceOf(job.device);
    const own = ownTemplateOf(job.template_code);
    const login = JSON.parse(open(keyPair, job.sealed_login)) as Login;
    const snmp = job.sealed_snmp
      ? await readSnmpSystemAt(JSON.parse(open(keyPair, job.sealed_snmp)) as SnmpTargetOrProblem, builtins, {
          now: () => new Date(),
        })
      : undefined;
    const found = await detectAt({ builtins, session }, { device, own, login, snmp }, signal, progress, masking);
    return {
      upload_key,
      job_id: job.id,
      outcome: "collected",
      detection: {
        result: found.result,
        ranked: found.ranked,
        proposal: found.proposal ?? null,
        model: found.model,
        os_version: found.osVersion,
        serial: found.serial,
        hostname: found.hostname,
        protocol: found.protocol,
      },
      duration_ms: Date.now() - started,
    };
  } catch (err) {
    const failure = err instanceof SessionError ? err : new SessionError("error", failureReason(err).slice(0, 500));
    const lastLines = maskedLines(failure.lastLines, masking.templates, masking.login);
    return {
      upload_key,
      job_id: job.id,
      outcome: failure.outcome as ResultUpload["outcome"],
      message: failure.message,
      reached: progress.connected,
      ...(lastLines.length ? { last_lines: lastLines } : {}),
      duration_ms: Date.now() - started,
    };
  }
}

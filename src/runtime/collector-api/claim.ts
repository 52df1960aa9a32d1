import { eq, isNotNull } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { credentials, devices, templates } from "../../db/schema/index.ts";
import { STOPPED_TOO_OFTEN, stoppedTooOften, type Job } from "../../platform/jobs/queue.ts";
import type { Logger } from "../../kernel/logger.ts";
import type { SecretBox } from "../../platform/secrets/box.ts";
import { seal } from "../../platform/secrets/sealed-box.ts";
import { failureReason } from "../../kernel/error-reason.ts";
import { finishJob } from "../../modules/tasks/index.ts";
import { completePushJob } from "../../modules/snippets/index.ts";
import { zoneSecretsDigestKey } from "../../modules/configs/index.ts";
import { recordBackupEnd } from "../../../collector/backup-events.ts";
import { loadPlan } from "../../../collector/download.ts";
import { loginOf } from "../../../collector/login.ts";
import { ownTemplateOf, recordDetection } from "../../../collector/detect-job.ts";
import { pushFailure, pushLoginOf, pushTargetOf } from "../../../collector/snippet-job.ts";
import { SessionError } from "../../../collector/session.ts";
import { snmpTargetOf } from "../../../collector/snmp.ts";
import type { WireJob } from "./wire.ts";

type Deps = { db: Db; secrets: SecretBox; now: () => Date; leaseMs: number; logger: Logger };
type Claimer = { publicKey: string; owner: string; zoneId: number };

/** The device's columns as the wire carries them: no encrypted secret, times as epoch ms. */
function wireDevice(device: typeof devices.$inferSelect): Record<string, unknown> {
  const { passwordEnc: _p, enablePasswordEnc: _e, ...rest } = device;
  return Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, v instanceof Date ? v.getTime() : v]));
}

const asFailure = (err: unknown) =>
  err instanceof SessionError ? err : new SessionError("error", failureReason(err).slice(0, 500));

/**
 * A claimed job as the claiming collector gets it: what its session needs, each secret sealed to that collector's
 * public key (in clear only in this process's memory and the collector's). A job nothing at the site could fix
 * (no template, a credential set gone, a deleted deployment, an interrupted push) ends here, saying why, and
 * answers undefined; so does one whose collectors stopped too often (the local collectors' rule, queue.ts).
 */
export async function wireJobOf(deps: Deps, claimer: Claimer, job: Job): Promise<WireJob | undefined> {
  const base = {
    id: job.id,
    attempts: job.attempts,
    max_attempts: job.maxAttempts,
    lease_ms: deps.leaseMs,
  };
  if (stoppedTooOften(job)) {
    deps.logger.warn("job not run: its collector stopped while running it on its last two attempts", {
      type: job.type,
      device: job.deviceId,
      attempts: job.attempts - 1,
      collector: claimer.owner,
    });
    await finishJob(deps.db, job, claimer.owner, STOPPED_TOO_OFTEN, deps.now());
    return undefined;
  }
  const sealed = (value: unknown) => seal(claimer.publicKey, JSON.stringify(value));
  const digestKey = () =>
    sealed(Buffer.from(zoneSecretsDigestKey(deps.secrets.secretsDigestKey, claimer.zoneId)).toString("base64"));
  if (job.type === "download") {
    try {
      const loaded = await loadPlan(deps.db, deps.secrets, job.deviceId!);
      return {
        ...base,
        type: "download",
        device: wireDevice(loaded.plan.device),
        template_code: loaded.templateCode,
        commands: loaded.plan.commands,
        sealed_login: sealed(loaded.plan.login),
        sealed_digest_key: digestKey(),
      };
    } catch (err) {
      const failure = asFailure(err);
      const end = { outcome: failure.outcome, message: failure.message };
      const { retrying } = await finishJob(deps.db, job, claimer.owner, end, deps.now());
      await recordBackupEnd(deps.db, job, { ...end, retrying }, deps.now());
      return undefined;
    }
  }
  if (job.type === "detect") {
    let device: typeof devices.$inferSelect | undefined;
    try {
      const [row] = await deps.db
        .select({ device: devices, cred: credentials, code: templates.code })
        .from(devices)
        .leftJoin(credentials, eq(credentials.id, devices.credId))
        .leftJoin(templates, eq(templates.id, devices.templateId))
        .where(eq(devices.id, job.deviceId!));
      if (!row) throw new SessionError("error", `device ${job.deviceId} no longer exists`);
      device = row.device;
      const login = await loginOf(deps.secrets, device, device.credId ? row.cred : null);
      const snmp = await snmpTargetOf(deps, { device, template: ownTemplateOf(row.code) });
      const builtins = await deps.db
        .select({ id: templates.id, key: templates.builtinKey, code: templates.code })
        .from(templates)
        .where(isNotNull(templates.builtinKey));
      return {
        ...base,
        type: "detect",
        device: wireDevice(device),
        template_code: row.code,
        commands: [],
        sealed_login: sealed(login),
        ...(snmp ? { sealed_snmp: sealed(snmp) } : {}),
        builtins: builtins.map((b) => ({ id: b.id, key: b.key!, code: b.code })),
      };
    } catch (err) {
      const failure = asFailure(err);
      const recording = { db: deps.db, clock: { now: deps.now }, owner: claimer.owner };
      await recordDetection(recording, job, device, { failure, lastLines: [] }, 0);
      return undefined;
    }
  }
  if (job.type === "snippet_push") {
    const finish = (end: Parameters<typeof completePushJob>[3]) =>
      completePushJob(deps.db, job, claimer.owner, end, deps.now(), finishJob);
    const target = await pushTargetOf(deps.db, job);
    if ("refused" in target) {
      await finish(target.refused);
      return undefined;
    }
    try {
      const loaded = await loadPlan(deps.db, deps.secrets, job.deviceId!);
      const pushLogin = await pushLoginOf(deps, loaded);
      return {
        ...base,
        type: "snippet_push",
        device: wireDevice(loaded.plan.device),
        template_code: loaded.templateCode,
        commands: loaded.plan.commands,
        sealed_login: sealed(loaded.plan.login),
        sealed_digest_key: digestKey(),
        push: { lines: target.lines, rollback_lines: target.rollbackLines, sealed_login: sealed(pushLogin) },
      };
    } catch (err) {
      await finish(pushFailure(asFailure(err), undefined, 0));
      return undefined;
    }
  }
  // Not a kind remote collectors run (the claim never gives one): ended rather than left to loop.
  await finishJob(
    deps.db,
    job,
    claimer.owner,
    { outcome: "error", message: `remote collectors do not run ${job.type} jobs` },
    deps.now(),
  );
  return undefined;
}

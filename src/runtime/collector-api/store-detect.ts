import { eq, inArray, isNotNull, and } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { devices, templates } from "../../db/schema/index.ts";
import type { Job } from "../../platform/jobs/queue.ts";
import { recordDetection, type DetectRun } from "../../../collector/detect-job.ts";
import type { ResultUpload } from "./wire.ts";

/**
 * Records a detection a remote collector ran: the same end as a local one (recordDetection: the proposal applied
 * when asked, the inventory kept). A collector proposes only among the server's built-in templates: any other
 * template id is refused, so a site can never point a device at a template it chose.
 */
export async function storeDetection(
  deps: { db: Db; now: Date },
  owner: string,
  job: Job,
  upload: ResultUpload,
): Promise<{ outcome: string; message: string } | undefined> {
  const [device] = await deps.db.select().from(devices).where(eq(devices.id, job.deviceId!));
  const failed = (outcome: ResultUpload["outcome"], message: string, lastLines: string[] = []): DetectRun => ({
    failure: { outcome: outcome === "collected" ? "error" : outcome, message },
    lastLines,
  });
  let ran: DetectRun;
  const found = upload.detection;
  if (upload.outcome !== "collected" || !found) {
    ran = failed(upload.outcome, upload.message ?? "the detection failed", upload.last_lines);
  } else {
    const ids = [...new Set(found.ranked.map((r) => r.template_id).concat(found.proposal?.template_id ?? []))];
    const builtin = ids.length
      ? await deps.db
          .select({ id: templates.id })
          .from(templates)
          .where(and(inArray(templates.id, ids), isNotNull(templates.builtinKey)))
      : [];
    ran =
      builtin.length === ids.length
        ? {
            found: {
              result: found.result,
              ranked: found.ranked,
              proposal: found.proposal ?? undefined,
              model: found.model,
              osVersion: found.os_version,
              serial: found.serial,
              hostname: found.hostname,
              protocol: found.protocol,
            },
          }
        : failed(
            "error",
            "the collector proposed a template that is not one of the server's built-ins; nothing was applied",
          );
  }
  const end = await recordDetection(
    { db: deps.db, clock: { now: () => deps.now }, owner },
    job,
    device,
    ran,
    upload.duration_ms,
  );
  return end && { outcome: end.outcome, message: end.message ?? end.outcome };
}

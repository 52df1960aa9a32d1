/**
 * Masking what is already stored: history written before today's rules (an upgrade added a rule, a template was
 * fixed) may hold secrets in clear. `scanStoredSecrets` reports the versions where the generic layer still finds
 * something; `remaskStoredConfigs` applies today's rules (the device's template, then the generic layer) to every
 * stored version and rewrites the ones that change: the new text stored by its hash, the old one deleted when no
 * version refers to it any more, stored diffs dropped to be rendered again from the masked texts, the series'
 * search documents rebuilt, and each rewritten version recorded in the activity log. One transaction per series.
 */
import { and, asc, eq, inArray, or } from "drizzle-orm";
import { deviceScopeCondition, type DeviceScope } from "../../../platform/auth/scope.ts";
import type { Db, DbOrTx } from "../../../db/client.ts";
import { configChanges, configs, devices, templates } from "../../../db/schema/index.ts";
import { recordActivities, type Actor } from "../../../platform/audit/record.ts";
import { findGenericSecrets } from "../../templates/index.ts";
import { parseTemplate, type ConnectionTemplate } from "../../templates/index.ts";
import { maskSecrets } from "../../templates/index.ts";
import { deleteBlobs, putWholeBlobs, readBlob } from "./blobs.ts";
import { reindexSeries } from "../search/search-reindex.ts";
import { lineCount, normalizeConfigText } from "./text.ts";
import { utf8Length } from "../../../kernel/text-bytes.ts";
import { sha256Hex } from "../../../kernel/hashing.ts";

type Series = { deviceId: number; deviceName: string; command: string; templateCode: string | null };

/** Each device command with stored versions (of the devices in `scope`), with the device's template. */
async function allSeries(db: DbOrTx, scope: DeviceScope = { all: true }): Promise<Series[]> {
  return db
    .selectDistinct({
      deviceId: configs.deviceId,
      deviceName: devices.name,
      command: configs.command,
      templateCode: templates.code,
    })
    .from(configs)
    .innerJoin(devices, eq(devices.id, configs.deviceId))
    .leftJoin(templates, eq(templates.id, devices.templateId))
    .where(deviceScopeCondition(scope))
    .orderBy(asc(configs.deviceId), asc(configs.command));
}

const versionsOf = (db: DbOrTx, s: Series) =>
  db
    .select({ id: configs.id, version: configs.version, blobHash: configs.blobHash })
    .from(configs)
    .where(and(eq(configs.deviceId, s.deviceId), eq(configs.command, s.command)))
    .orderBy(asc(configs.version));

export type SecretFinding = {
  config_id: number;
  device_id: number;
  device_name: string;
  command: string;
  version: number;
  values: number;
  rules: string[];
};

/** Every stored version where the generic layer finds a value still in clear (its rules, never the values). */
export async function scanStoredSecrets(
  db: DbOrTx,
  scope: DeviceScope = { all: true },
): Promise<{ versions_scanned: number; findings: SecretFinding[] }> {
  const findings: SecretFinding[] = [];
  let scanned = 0;
  const texts = new Map<string, ReturnType<typeof findGenericSecrets>>();
  for (const s of await allSeries(db, scope)) {
    for (const v of await versionsOf(db, s)) {
      scanned++;
      let spans = texts.get(v.blobHash);
      if (!spans) texts.set(v.blobHash, (spans = findGenericSecrets(await readBlob(db, v.blobHash))));
      if (spans.length) {
        findings.push({
          config_id: v.id,
          device_id: s.deviceId,
          device_name: s.deviceName,
          command: s.command,
          version: v.version,
          values: spans.length,
          rules: [...new Set(spans.map((x) => x.rule))].sort(),
        });
      }
    }
  }
  return { versions_scanned: scanned, findings };
}

export type RemaskReport = { versions_checked: number; versions_rewritten: number; series_rewritten: number };

const EMPTY_TEMPLATE = { secrets: [] } as Pick<ConnectionTemplate, "secrets">;

/** Rewrites every stored version that today's rules mask further. `dryRun`: counts them, changes nothing. */
export async function remaskStoredConfigs(
  db: Db,
  options: { actor: Actor; now: Date; dryRun?: boolean; progress?: (line: string) => void },
): Promise<RemaskReport> {
  const report: RemaskReport = { versions_checked: 0, versions_rewritten: 0, series_rewritten: 0 };
  const parsed = new Map<string, Pick<ConnectionTemplate, "secrets">>();
  const templateOf = (code: string | null) => {
    if (code === null) return EMPTY_TEMPLATE;
    let t = parsed.get(code);
    if (!t) {
      const p = parseTemplate(code);
      parsed.set(code, (t = p.ok ? p.template : EMPTY_TEMPLATE));
    }
    return t;
  };
  for (const s of await allSeries(db)) {
    const template = templateOf(s.templateCode);
    const rewritten = await db.transaction(async (tx) => {
      const versions = await versionsOf(tx, s);
      report.versions_checked += versions.length;
      const changed: { id: number; version: number; from: string; to: string; text: string }[] = [];
      for (const v of versions) {
        const text = await readBlob(tx, v.blobHash);
        const masked = normalizeConfigText(maskSecrets(text, template.secrets));
        if (masked === text) continue;
        changed.push({ id: v.id, version: v.version, from: v.blobHash, to: await sha256Hex(masked), text: masked });
      }
      if (!changed.length || options.dryRun) return changed.length;
      await putWholeBlobs(
        tx,
        changed.map((c) => ({ hash: c.to, text: c.text, size: utf8Length(c.text) })),
        options.now,
      );
      for (const c of changed) {
        // The latest version's compare hash is worked out again from its text by the next download (store.ts); its
        // secrets digest covered the values the old rules masked, so it is forgotten: today's would differ.
        await tx
          .update(configs)
          .set({
            blobHash: c.to,
            size: utf8Length(c.text),
            lines: lineCount(c.text),
            significantHash: "",
            secretsDigest: null,
          })
          .where(eq(configs.id, c.id));
      }
      const ids = changed.map((c) => c.id);
      await tx
        .update(configChanges)
        .set({ diff: null })
        .where(or(inArray(configChanges.configId, ids), inArray(configChanges.previousConfigId, ids)));
      const old = [...new Set(changed.map((c) => c.from))];
      const stillUsed = new Set(
        (await tx.select({ hash: configs.blobHash }).from(configs).where(inArray(configs.blobHash, old))).map(
          (r) => r.hash,
        ),
      );
      await deleteBlobs(
        tx,
        old.filter((h) => !stillUsed.has(h)),
      );
      await reindexSeries(tx, s.deviceId, s.command);
      await recordActivities(
        tx,
        options.actor,
        changed.map((c) => ({
          action: "config.remask",
          subjectType: "config",
          subjectId: c.id,
          after: { device_id: s.deviceId, command: s.command, version: c.version },
          reach: { devices: [s.deviceId] },
        })),
        options.now,
      );
      return changed.length;
    });
    if (rewritten) {
      report.versions_rewritten += rewritten;
      report.series_rewritten++;
      options.progress?.(
        `${options.dryRun ? "would rewrite" : "rewrote"} ${rewritten} version${rewritten === 1 ? "" : "s"} of ${s.deviceName} ${s.command}`,
      );
    }
  }
  return report;
}

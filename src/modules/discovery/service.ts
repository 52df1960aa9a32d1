import { and, asc, count, eq, inArray, isNotNull } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { credentials, discoveryCandidates, scanPresets, tasks } from "../../db/schema/index.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import type { ListQuery } from "../../platform/http/list.ts";
import { enqueueJob, PRIORITY, type Job } from "../../platform/jobs/queue.ts";
import { recordActivity } from "../../platform/audit/record.ts";
import { adoptCandidates, notAdoptable, type Candidate } from "./adopt.ts";
import { expandTargets } from "./targets.ts";

/** What discovery's routes and pages do (docs/discovery.md); every caller has been checked by `refuseScoped`. */

/**
 * A scan sends shared credential sets to addresses the caller names, and makes devices that a narrower role
 * scope would not cover: discovery is for roles that see every device.
 */
export function refuseScoped(auth: AuthContext): void {
  if (!auth.scope.all)
    throw new ApiError(403, "Discovery needs a role that sees every device: its scans use shared credential sets");
}

const iso = (d: Date) => d.toISOString();

export const serializeCandidate = (c: Candidate) => ({
  id: c.id,
  address: c.address,
  port: c.port,
  protocol: c.protocol,
  credential_id: c.credId,
  template_id: c.templateId,
  vendor: c.vendor,
  model: c.model,
  os_version: c.osVersion,
  serial: c.serial,
  hostname: c.hostname,
  problem: c.problem,
  state: c.state,
  device_id: c.deviceId,
  preset_id: c.presetId,
  found_at: iso(c.foundAt),
  updated_at: iso(c.updatedAt),
});

export const serializePreset = (p: typeof scanPresets.$inferSelect) => ({
  id: p.id,
  name: p.name,
  targets: p.targets,
  ports: p.ports,
  credential_ids: p.credIds,
  adopt: p.adopt,
  connects_per_second: p.connectsPerSecond,
  max_connects: p.maxConnects,
  created_at: iso(p.createdAt),
  updated_at: iso(p.updatedAt),
});

/** 422 unless every credential set named exists. */
async function requireSets(db: Db, ids: number[] | undefined, field: string): Promise<void> {
  if (!ids?.length) return;
  const rows = await db.select({ id: credentials.id }).from(credentials).where(inArray(credentials.id, ids));
  const missing = ids.filter((id) => !rows.some((r) => r.id === id));
  if (missing.length) throw ApiError.validation({ [field]: [`no credential set has id ${missing.join(", ")}`] });
}

/** Checks the targets (422 naming each bad one) and queues the discover job. */
export async function requestDiscovery(
  db: Db,
  auth: AuthContext,
  input: { addresses: string[]; ports: number[]; adopt: boolean; credential_ids?: number[] },
  now: Date,
): Promise<Job> {
  refuseScoped(auth);
  const expanded = await expandTargets(input.addresses);
  if (Object.keys(expanded.errors).length) throw ApiError.validation(expanded.errors);
  await requireSets(db, input.credential_ids, "credential_ids");
  const ports = [...new Set(input.ports)];
  const job = await enqueueJob(
    db,
    {
      type: "discover",
      trigger: "api",
      priority: PRIORITY.downloadNow,
      requestedBy: auth.userId,
      params: {
        addresses: expanded.addresses,
        ports,
        adopt: input.adopt,
        ...(input.credential_ids?.length ? { cred_ids: input.credential_ids } : {}),
      },
    },
    now,
  );
  await recordActivity(
    db,
    auth,
    {
      action: "device.discover",
      subjectType: "job",
      subjectId: job.id,
      after: { targets: input.addresses, addresses: expanded.addresses.length, ports, adopt: input.adopt },
    },
    now,
  );
  return job;
}

export async function listCandidates(db: Db, q: ListQuery) {
  const [{ total }] = (await db.select({ total: count() }).from(discoveryCandidates).where(q.where)) as [
    { total: number },
  ];
  const rows = await db
    .select()
    .from(discoveryCandidates)
    .where(q.where)
    .orderBy(...q.orderBy)
    .limit(q.perPage)
    .offset((q.page - 1) * q.perPage);
  return { total, rows: rows.map(serializeCandidate) };
}

async function candidateOr404(db: Db, id: number): Promise<Candidate> {
  const [row] = await db.select().from(discoveryCandidates).where(eq(discoveryCandidates.id, id));
  if (!row) throw ApiError.notFound(`Candidate ${id}`);
  return row;
}

/** Adopts one candidate (422 saying why when it cannot be). */
export async function adoptOne(db: Db, auth: AuthContext, id: number, now: Date): Promise<Candidate> {
  refuseScoped(auth);
  const candidate = await candidateOr404(db, id);
  const why = notAdoptable(candidate);
  if (why) throw ApiError.validation({ id: [why] });
  await db.transaction((tx) => adoptCandidates(tx, [candidate], auth, now, auth.userId));
  return candidateOr404(db, id);
}

export async function ignoreOne(db: Db, auth: AuthContext, id: number, now: Date): Promise<Candidate> {
  refuseScoped(auth);
  const candidate = await candidateOr404(db, id);
  if (candidate.state === "adopted") throw ApiError.conflict(`Candidate ${id} is already device ${candidate.deviceId}`);
  await db.transaction(async (tx) => {
    await tx
      .update(discoveryCandidates)
      .set({ state: "ignored", updatedAt: now })
      .where(eq(discoveryCandidates.id, id));
    await recordActivity(
      tx,
      auth,
      { action: "discovery.ignore", subjectType: "candidate", subjectId: id, after: { address: candidate.address } },
      now,
    );
  });
  return candidateOr404(db, id);
}

/** Adopts every pending candidate that has a credential set and a template. */
export async function adoptAll(db: Db, auth: AuthContext, now: Date): Promise<Candidate[]> {
  refuseScoped(auth);
  const ready = await db
    .select()
    .from(discoveryCandidates)
    .where(
      and(
        eq(discoveryCandidates.state, "pending"),
        isNotNull(discoveryCandidates.credId),
        isNotNull(discoveryCandidates.templateId),
      ),
    );
  if (!ready.length) return [];
  await db.transaction((tx) => adoptCandidates(tx, ready, auth, now, auth.userId));
  return db
    .select()
    .from(discoveryCandidates)
    .where(
      inArray(
        discoveryCandidates.id,
        ready.map((c) => c.id),
      ),
    );
}

export type PresetInput = {
  name: string;
  targets: string[];
  ports: number[];
  credential_ids: number[];
  adopt: boolean;
  connects_per_second: number;
  max_connects: number;
};

export async function createPreset(db: Db, auth: AuthContext, input: PresetInput, now: Date) {
  refuseScoped(auth);
  const expanded = await expandTargets(input.targets, "targets");
  if (Object.keys(expanded.errors).length) throw ApiError.validation(expanded.errors);
  await requireSets(db, input.credential_ids, "credential_ids");
  const [taken] = await db.select({ id: scanPresets.id }).from(scanPresets).where(eq(scanPresets.name, input.name));
  if (taken) throw ApiError.conflict(`A scan preset named ${input.name} exists (id ${taken.id})`);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(scanPresets)
      .values({
        name: input.name,
        targets: input.targets,
        ports: [...new Set(input.ports)],
        credIds: input.credential_ids,
        adopt: input.adopt,
        connectsPerSecond: input.connects_per_second,
        maxConnects: input.max_connects,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await recordActivity(
      tx,
      auth,
      { action: "scan_preset.create", subjectType: "scan_preset", subjectId: row!.id, after: serializePreset(row!) },
      now,
    );
    return row!;
  });
}

export async function listPresets(db: Db) {
  return db.select().from(scanPresets).orderBy(asc(scanPresets.name));
}

export async function presetOr404(db: Db, id: number) {
  const [row] = await db.select().from(scanPresets).where(eq(scanPresets.id, id));
  if (!row) throw ApiError.notFound(`Scan preset ${id}`);
  return row;
}

export async function deletePreset(db: Db, auth: AuthContext, id: number, now: Date) {
  refuseScoped(auth);
  const preset = await presetOr404(db, id);
  // A discovery_scan task without its preset would fail each run: its tasks go first, said by name.
  const users = await db.select({ id: tasks.id, name: tasks.name }).from(tasks).where(eq(tasks.scanPresetId, id));
  if (users.length)
    throw ApiError.conflict(
      `Scan preset ${preset.name} is run by the tasks ${users.map((t) => `${t.name} (id ${t.id})`).join(", ")}: delete them or give them another preset first`,
    );
  await db.transaction(async (tx) => {
    await tx.delete(scanPresets).where(eq(scanPresets.id, id));
    await recordActivity(
      tx,
      auth,
      { action: "scan_preset.delete", subjectType: "scan_preset", subjectId: id, before: serializePreset(preset) },
      now,
    );
  });
}

/** Queues a preset's scan now (its schedule is a discovery_scan task's). */
export async function runPreset(db: Db, auth: AuthContext, id: number, now: Date): Promise<Job> {
  refuseScoped(auth);
  await presetOr404(db, id);
  return enqueueJob(
    db,
    { type: "discover", trigger: "api", priority: PRIORITY.api, requestedBy: auth.userId, params: { preset_id: id } },
    now,
  );
}

import { and, eq, gte, inArray, lt, max, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { complianceDays, complianceResults, type ComplianceStatus } from "../../db/schema/index.ts";
import { revisionsOf } from "./stored-rules.ts";

/**
 * The whole fleet's compliance at given instants (the trends' period ends), from the daily roll-up: the state at
 * the end of a finished day is computed once and kept (compliance_days); an instant is reached from the nearest
 * state before it by reading only the devices with results in between. A trend of 30 days thus reads 30 days'
 * results, not every result of every pair since the first (bench:estate: 13.5 s for 30 days at 20,000 devices).
 * Triggers on compliance_results delete the days a later write or delete changes (migration 0030), and those are
 * computed again from the nearest day kept before them.
 */

type Tally = { devices: number; compliant: number; not_compliant: number; not_evaluated: number };
type Failing = { policyId: number; rule: number; description: string; devices: number };

/** The fleet at one instant: tallies per policy (0: all policies) and the devices failing each (policy, rule). */
export type FleetState = { tallies: Map<number, Tally>; failing: Map<string, Failing> };

/** One device's share of a state: its worst status per policy and overall, and the rules it fails. */
type Share = {
  byPolicy: Map<number, ComplianceStatus>;
  all: ComplianceStatus | null;
  failing: Map<string, Omit<Failing, "devices">>;
};

const ALL = 0;
const RANK: Record<ComplianceStatus, number> = { compliant: 0, not_evaluated: 1, not_compliant: 2 };
const worse = (a: ComplianceStatus | null | undefined, b: ComplianceStatus) =>
  a === null || a === undefined || RANK[b] > RANK[a] ? b : a;
const DEVICES_PER_QUERY = 500;

const emptyState = (): FleetState => ({ tallies: new Map(), failing: new Map() });
const ruleKey = (policyId: number, rule: number) => `${policyId}:${rule}`;

/**
 * The states at `ends` (ascending, whole days as epoch ms), each kept once computed. Today's is kept too: the
 * triggers drop it when a result is written, so every chart of the day after a nightly run reads one row instead
 * of every device's results (bench:web at 10,000 devices: 1,000 ms for the compliance and reports pages' trend).
 */
export async function fleetStates(db: DbOrTx, ends: readonly number[], now: Date): Promise<FleetState[]> {
  const seen = await newestResult(db);
  const kept = await keptStates(db, ends);
  const states: FleetState[] = [];
  let base: { at: number | null; state: FleetState } | undefined;
  for (const end of ends) {
    const found = kept.get(end);
    if (found) {
      base = { at: end, state: found };
      states.push(found);
      continue;
    }
    base ??= await nearestBefore(db, end);
    const state = cloneState(base.state);
    await applyChanges(db, state, base.at, end);
    await keep(db, end, state);
    // A result written while this state was computed fired its trigger before the row existed: drop the row.
    if (end > now.getTime() && (await newestResult(db)) !== seen) await forget(db, end);
    base = { at: end, state };
    states.push(state);
  }
  return states;
}

/** The newest result's id: it changes whenever a result is written. */
async function newestResult(db: DbOrTx): Promise<number | null> {
  const [row] = await db.select({ id: max(complianceResults.id) }).from(complianceResults);
  return row?.id ?? null;
}

async function forget(db: DbOrTx, end: number) {
  await db.delete(complianceDays).where(eq(complianceDays.dayEnd, end));
}

/** The kept days among `ends`. */
async function keptStates(db: DbOrTx, ends: readonly number[]): Promise<Map<number, FleetState>> {
  const states = new Map<number, FleetState>();
  if (!ends.length) return states;
  const rows = await db
    .select()
    .from(complianceDays)
    .where(inArray(complianceDays.dayEnd, [...ends]));
  // A day is kept whole or not at all: its all-policies row says it is.
  for (const r of rows) if (r.policyId === ALL) states.set(r.dayEnd, emptyState());
  for (const r of rows) {
    const state = states.get(r.dayEnd);
    if (!state) continue;
    state.tallies.set(r.policyId, {
      devices: r.devices,
      compliant: r.compliant,
      not_compliant: r.notCompliant,
      not_evaluated: r.notEvaluated,
    });
    for (const [rule, devices, description] of r.failingRules)
      state.failing.set(ruleKey(r.policyId, rule), { policyId: r.policyId, rule, description, devices });
  }
  return states;
}

/** The latest kept day before `end`, or the empty fleet before any result. */
async function nearestBefore(db: DbOrTx, end: number): Promise<{ at: number | null; state: FleetState }> {
  const [row] = await db
    .select({ at: max(complianceDays.dayEnd) })
    .from(complianceDays)
    .where(and(sql`${complianceDays.policyId} = ${ALL}`, lt(complianceDays.dayEnd, end)));
  const at = row?.at ?? null;
  if (at === null) return { at: null, state: emptyState() };
  return { at, state: (await keptStates(db, [at])).get(at)! };
}

function cloneState(s: FleetState): FleetState {
  return {
    tallies: new Map([...s.tallies].map(([k, t]) => [k, { ...t }])),
    failing: new Map([...s.failing].map(([k, f]) => [k, { ...f }])),
  };
}

/**
 * Moves `state` from instant `from` (null: before any result) to `to`: each device with a result in between
 * gives up its share at `from` and takes its share at `to`.
 */
async function applyChanges(db: DbOrTx, state: FleetState, from: number | null, to: number) {
  const changed = await changedDevicesQuery(db, from, to);
  const ids = changed.map((r) => r.deviceId);
  for (let i = 0; i < ids.length; i += DEVICES_PER_QUERY) {
    const batch = ids.slice(i, i + DEVICES_PER_QUERY);
    if (from !== null) for (const share of (await sharesAt(db, batch, from)).values()) addShare(state, share, -1);
    for (const share of (await sharesAt(db, batch, to)).values()) addShare(state, share, 1);
  }
}

/** The devices with a result made in [from, to) (from null: before `to`), through the evaluated_at index. */
export const changedDevicesQuery = (db: DbOrTx, from: number | null, to: number) =>
  db
    .selectDistinct({ deviceId: complianceResults.deviceId })
    .from(complianceResults)
    .where(
      and(
        from === null ? undefined : gte(complianceResults.evaluatedAt, new Date(from)),
        lt(complianceResults.evaluatedAt, new Date(to)),
      ),
    );

/** Each (assignment, device) pair's newest result before `at`, of the devices given: through the device index. */
export function currentResultsQuery(db: DbOrTx, deviceIds: number[], at: number) {
  const cr = complianceResults;
  return db
    .select({
      deviceId: cr.deviceId,
      policyId: cr.policyId,
      policyHash: cr.policyHash,
      status: cr.status,
      failed: sql<string>`(select json_group_array(key) from json_each(${cr.rules}) where json_extract(value, '$.p') = 0)`,
    })
    .from(cr)
    .where(
      and(
        inArray(cr.deviceId, deviceIds),
        sql`${cr.id} = (select r2.id from ${cr} r2
          where r2.device_id = ${cr.deviceId} and r2.assignment_id = ${cr.assignmentId} and r2.evaluated_at < ${at}
          order by r2.evaluated_at desc, r2.id desc limit 1)`,
      ),
    );
}

/** The devices' shares just before `at`, from each of their (assignment, device) pairs' newest result then. */
async function sharesAt(db: DbOrTx, deviceIds: number[], at: number): Promise<Map<number, Share>> {
  const rows = await currentResultsQuery(db, deviceIds, at);
  const failedOf = rows.map((r) => JSON.parse(r.failed) as number[]);
  const revisions = await revisionsOf(
    db,
    rows.filter((_, k) => failedOf[k]!.length).map((r) => r.policyHash),
  );
  const shares = new Map<number, Share>();
  rows.forEach((r, k) => {
    let share = shares.get(r.deviceId);
    if (!share) shares.set(r.deviceId, (share = { byPolicy: new Map(), all: null, failing: new Map() }));
    share.byPolicy.set(r.policyId, worse(share.byPolicy.get(r.policyId), r.status));
    share.all = worse(share.all, r.status);
    const rules = revisions.get(r.policyHash);
    for (const rule of failedOf[k]!) {
      const key = ruleKey(r.policyId, rule);
      if (!share.failing.has(key))
        share.failing.set(key, { policyId: r.policyId, rule, description: rules?.[rule]?.description ?? "" });
    }
  });
  return shares;
}

function addShare(state: FleetState, share: Share, sign: 1 | -1) {
  const count = (policyId: number, status: ComplianceStatus) => {
    let t = state.tallies.get(policyId);
    if (!t) state.tallies.set(policyId, (t = { devices: 0, compliant: 0, not_compliant: 0, not_evaluated: 0 }));
    t.devices += sign;
    t[status] += sign;
  };
  for (const [policyId, status] of share.byPolicy) count(policyId, status);
  if (share.all) count(ALL, share.all);
  for (const [key, f] of share.failing) {
    const entry = state.failing.get(key);
    if (entry) {
      entry.devices += sign;
      if (entry.devices === 0) state.failing.delete(key);
    } else state.failing.set(key, { ...f, devices: sign });
  }
}

/**
 * Keeps a day's state. A failure to keep it (a full disk) only means it is computed again when next asked; a day
 * another request kept meanwhile is the same day.
 */
async function keep(db: DbOrTx, end: number, state: FleetState) {
  const all = state.tallies.get(ALL) ?? { devices: 0, compliant: 0, not_compliant: 0, not_evaluated: 0 };
  const byPolicy = [...state.tallies].filter(([policyId, t]) => policyId !== ALL && t.devices > 0);
  const rows = [
    { policyId: ALL, tally: all, failing: [] as [number, number, string][] },
    ...byPolicy.map(([policyId, tally]) => ({
      policyId,
      tally,
      failing: [...state.failing.values()]
        .filter((f) => f.policyId === policyId)
        .map((f): [number, number, string] => [f.rule, f.devices, f.description]),
    })),
  ];
  try {
    await db
      .insert(complianceDays)
      .values(
        rows.map((r) => ({
          dayEnd: end,
          policyId: r.policyId,
          devices: r.tally.devices,
          compliant: r.tally.compliant,
          notCompliant: r.tally.not_compliant,
          notEvaluated: r.tally.not_evaluated,
          failingRules: r.failing,
        })),
      )
      .onConflictDoNothing();
  } catch {
    // Not kept: computed again next time.
  }
}

/** A policy's (or, with null, every policy's) tally and failing rules in a state, as the trends show them. */
export function stateOf(state: FleetState, policyId: number | null) {
  const tally = state.tallies.get(policyId ?? ALL) ?? { devices: 0, compliant: 0, not_compliant: 0, not_evaluated: 0 };
  const failing = [...state.failing.values()]
    .filter((f) => policyId === null || f.policyId === policyId)
    .map((f) => ({ policy_id: f.policyId, rule: f.rule, description: f.description, devices: f.devices }))
    .sort((a, b) => b.devices - a.devices || a.policy_id - b.policy_id || a.rule - b.rule);
  return { tally, failing };
}

import type { z } from "@hono/zod-openapi";
import { and, asc, eq, type SQL, sql } from "drizzle-orm";
import { deviceScopeCondition, type DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { complianceResults, devices, type ComplianceStatus } from "../../db/schema/index.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { newestBefore } from "./current.ts";
import { fleetStates, stateOf } from "./daily.ts";
import type { Trends, TrendsQuery } from "./schemas.ts";
import { revisionsOf } from "./stored-rules.ts";

const DAY = 86_400_000;
const MAX_PERIODS = 400;

type TrendsOut = z.infer<typeof Trends>;

/** A device's state from its pairs': not compliant when any is, compliant when all are, else not evaluated. */
const RANK: Record<ComplianceStatus, number> = { compliant: 0, not_evaluated: 1, not_compliant: 2 };

/**
 * The fleet's compliance per period, from history: at each period's end, every (assignment, device) pair's
 * newest result before then; a device is compliant when all of its are, not compliant when any is not.
 * The whole fleet (an unscoped caller) is read from the daily roll-up (daily.ts). A scoped caller's view, which
 * the roll-up does not keep, walks the results; `failingRules: false` (the pages' charts, which show only the
 * counts) leaves each period's `failing_rules` empty and then has the database count the devices
 * (tallyInDatabase) instead of reading every result.
 */
export async function complianceTrends(
  db: DbOrTx,
  scope: DeviceScope,
  query: z.infer<typeof TrendsQuery>,
  now: Date,
  options: { failingRules?: boolean } = {},
): Promise<TrendsOut> {
  const withRules = options.failingRules ?? true;
  const groupBy = query.group_by ?? "day";
  const step = groupBy === "day" ? DAY : 7 * DAY;
  const to = query.to ? Date.parse(query.to) : Math.floor(now.getTime() / DAY) * DAY;
  const from = query.from ? Date.parse(query.from) : to - (groupBy === "day" ? 29 : 77) * DAY;
  if (Number.isNaN(to) || Number.isNaN(from))
    throw ApiError.validation({ [Number.isNaN(to) ? "to" : "from"]: ["must be a real date"] });
  if (from > to) throw ApiError.validation({ from: ["from must not be after to"] });
  const count = Math.floor((to - from) / step) + 1;
  if (count > MAX_PERIODS)
    throw ApiError.validation({
      from: [`from and to span ${count} periods; at most ${MAX_PERIODS} (use group_by=week for long spans)`],
    });

  const shape = {
    policy_id: query.policy_id ?? null,
    group_by: groupBy,
    from: new Date(from).toISOString().slice(0, 10),
    to: new Date(to).toISOString().slice(0, 10),
  };
  if (scope.all)
    return { ...shape, periods: await fromDailyStates(db, query.policy_id ?? null, from, to, step, now, withRules) };
  const within = and(
    deviceScopeCondition(scope),
    query.policy_id ? eq(complianceResults.policyId, query.policy_id) : undefined,
  );
  if (!withRules)
    return { ...shape, periods: await tallyInDatabase(db, within, newestBefore(from, scope), from, to, step) };
  // One pass over history instead of a query per period (each reading every pair's newest result before its end:
  // 39 s for 30 days of a 2,000-device estate, bench:estate): the pairs' state when the range starts, then the
  // results inside it in the order they were made, each period's tally taken as the walk passes its end.
  const last = Math.min(from + (count - 1) * step + step, to + DAY);
  const select = () =>
    db
      .select({
        id: complianceResults.id,
        assignmentId: complianceResults.assignmentId,
        deviceId: complianceResults.deviceId,
        policyId: complianceResults.policyId,
        status: complianceResults.status,
        evaluatedAt: complianceResults.evaluatedAt,
        policyHash: complianceResults.policyHash,
        failed: sql<string>`(select json_group_array(key) from json_each(${complianceResults.rules}) where json_extract(value, '$.p') = 0)`,
      })
      .from(complianceResults)
      .innerJoin(devices, eq(devices.id, complianceResults.deviceId));
  const [before, inRange] = await Promise.all([
    select().where(and(within, sql`${complianceResults.evaluatedAt} < ${from}`, newestBefore(from, scope))),
    select()
      .where(
        and(within, sql`${complianceResults.evaluatedAt} >= ${from}`, sql`${complianceResults.evaluatedAt} < ${last}`),
      )
      .orderBy(asc(complianceResults.evaluatedAt), asc(complianceResults.id)),
  ]);
  type Row = (typeof before)[number];
  const revisions = await revisionsOf(
    db,
    [...before, ...inRange].filter((r) => r.failed !== "[]").map((r) => r.policyHash),
  );
  const current = new Map<string, Omit<Row, "failed"> & { failed: [number, string][] }>();
  // Each result's failed rules parsed once, when it becomes its pair's current one.
  const take = (r: Row) =>
    current.set(`${r.assignmentId}:${r.deviceId}`, {
      ...r,
      failed: (JSON.parse(r.failed) as number[]).map((k) => [k, revisions.get(r.policyHash)?.[k]?.description ?? ""]),
    });
  before.forEach(take);

  const periods: TrendsOut["periods"] = [];
  let next = 0;
  for (let start = from; start <= to; start += step) {
    const end = Math.min(start + step, to + DAY);
    const taken = next;
    while (next < inRange.length && inRange[next]!.evaluatedAt.getTime() < end) take(inRange[next++]!);
    const previous = periods.at(-1);
    if (previous && next === taken) {
      // No result in this period: the fleet stands as it did at the previous one's end.
      periods.push({
        ...previous,
        period_start: new Date(start).toISOString(),
        period_end: new Date(end).toISOString(),
      });
      continue;
    }
    const byDevice = new Map<number, ComplianceStatus>();
    const failing = new Map<string, { policy_id: number; rule: number; description: string; devices: Set<number> }>();
    for (const r of current.values()) {
      const seen = byDevice.get(r.deviceId);
      if (seen === undefined || RANK[r.status] > RANK[seen]) byDevice.set(r.deviceId, r.status);
      for (const [index, description] of r.failed) {
        const key = `${r.policyId}:${index}`;
        const entry = failing.get(key) ?? {
          policy_id: r.policyId,
          rule: index,
          description,
          devices: new Set<number>(),
        };
        entry.devices.add(r.deviceId);
        failing.set(key, entry);
      }
    }
    const tally = { compliant: 0, not_compliant: 0, not_evaluated: 0 };
    for (const status of byDevice.values()) tally[status]++;
    const judged = tally.compliant + tally.not_compliant;
    periods.push({
      period_start: new Date(start).toISOString(),
      period_end: new Date(end).toISOString(),
      devices: byDevice.size,
      ...tally,
      compliant_percent: judged ? Math.round((tally.compliant / judged) * 1000) / 10 : null,
      failing_rules: [...failing.values()]
        .map((f) => ({ policy_id: f.policy_id, rule: f.rule, description: f.description, devices: f.devices.size }))
        .sort((a, b) => b.devices - a.devices || a.policy_id - b.policy_id || a.rule - b.rule),
    });
  }
  return { ...shape, periods };
}

/** The periods of the whole fleet (an unscoped caller), each from the state at its end (daily.ts). */
async function fromDailyStates(
  db: DbOrTx,
  policyId: number | null,
  from: number,
  to: number,
  step: number,
  now: Date,
  withRules: boolean,
): Promise<TrendsOut["periods"]> {
  const bounds: { start: number; end: number }[] = [];
  for (let start = from; start <= to; start += step) bounds.push({ start, end: Math.min(start + step, to + DAY) });
  const states = await fleetStates(
    db,
    bounds.map((b) => b.end),
    now,
  );
  return bounds.map((b, i) => {
    const { tally, failing } = stateOf(states[i]!, policyId);
    const judged = tally.compliant + tally.not_compliant;
    return {
      period_start: new Date(b.start).toISOString(),
      period_end: new Date(b.end).toISOString(),
      devices: tally.devices,
      compliant: tally.compliant,
      not_compliant: tally.not_compliant,
      not_evaluated: tally.not_evaluated,
      compliant_percent: judged ? Math.round((tally.compliant / judged) * 1000) / 10 : null,
      failing_rules: withRules ? failing : [],
    };
  });
}

/**
 * The periods' device counts without their failing rules, tallied by the database (the pages' charts): each result
 * the walk above would take (the pairs' newest before the range, those inside it) holds from when it was made
 * until its pair's next one; at each period's end a device takes its worst current result, and devices are counted
 * per state. Only three rows a period come back, where the walk reads every result.
 */
async function tallyInDatabase(
  db: DbOrTx,
  within: SQL | undefined,
  startState: SQL,
  from: number,
  to: number,
  step: number,
): Promise<TrendsOut["periods"]> {
  const bounds: { start: number; end: number }[] = [];
  for (let start = from; start <= to; start += step) bounds.push({ start, end: Math.min(start + step, to + DAY) });
  const last = bounds.at(-1)!.end;
  const ends = sql.join(
    bounds.map((b, i) => sql`(${i}, ${b.end})`),
    sql`, `,
  );
  const cr = complianceResults;
  const rows = await db.all<{ period: number; rank: number; devices: number }>(sql`
    with ends(period, at) as (values ${ends}),
    taken as (
      select ${cr.deviceId} as device_id,
        case ${cr.status} when 'not_compliant' then 2 when 'not_evaluated' then 1 else 0 end as rank,
        ${cr.evaluatedAt} as made,
        lead(${cr.evaluatedAt}) over (partition by ${cr.assignmentId}, ${cr.deviceId} order by ${cr.evaluatedAt}, ${cr.id}) as replaced
      from ${cr} inner join ${devices} on ${devices.id} = ${cr.deviceId}
      where ${within ?? sql`1`} and ${cr.evaluatedAt} < ${last}
        and (${cr.evaluatedAt} >= ${from} or ${startState})
    ),
    worst as (
      select ends.period, taken.device_id, max(taken.rank) as rank from ends
      inner join taken on taken.made < ends.at and (taken.replaced is null or taken.replaced >= ends.at)
      group by ends.period, taken.device_id
    )
    select period, rank, count(*) as devices from worst group by period, rank`);
  const STATES = ["compliant", "not_evaluated", "not_compliant"] as const;
  const tallies = bounds.map(() => ({ compliant: 0, not_compliant: 0, not_evaluated: 0 }));
  for (const r of rows) tallies[Number(r.period)]![STATES[Number(r.rank)]!] = Number(r.devices);
  return bounds.map((b, i) => {
    const tally = tallies[i]!;
    const judged = tally.compliant + tally.not_compliant;
    return {
      period_start: new Date(b.start).toISOString(),
      period_end: new Date(b.end).toISOString(),
      devices: tally.compliant + tally.not_compliant + tally.not_evaluated,
      ...tally,
      compliant_percent: judged ? Math.round((tally.compliant / judged) * 1000) / 10 : null,
      failing_rules: [],
    };
  });
}

import { z } from "@hono/zod-openapi";
import type { Context, Hono } from "hono";
import { complianceTrends } from "../../modules/compliance/index.ts";
import { reportAnswer } from "../../modules/reports/index.ts";
import { dayRange } from "../../modules/reports/index.ts";
import {
  backupSuccess,
  backupSummary,
  changeHistory,
  changesPerDay,
  DEVICE_GROUPS,
  deviceStatistics,
  topChangers,
} from "../../modules/reports/index.ts";
import { rangeParams } from "../../modules/reports/index.ts";
import { plural } from "../../kernel/words.ts";
import { Chart } from "./chart.tsx";
import type { WebEnv } from "./env.ts";
import { Time } from "./format.tsx";
import { renderPage } from "./layout.tsx";
import { routeQuery } from "./route-query.ts";
import { requirePage } from "./viewer.ts";

const DAY = 86_400_000;

/** The page's query, checked by the report routes' own schemas (a bad date is the API's 422). */
const ReportsQuery = z.object({
  ...rangeParams,
  group_by: z.enum(DEVICE_GROUPS, { error: `must be one of: ${DEVICE_GROUPS.join(", ")}` }).optional(),
});

function readQuery(c: Context<WebEnv>) {
  const query = routeQuery({ request: { query: ReportsQuery } }, c.req.query());
  return { query, range: dayRange(query, c.var.services.clock.now()) };
}

/** The same report as a CSV file, for each report on the page. */
const REPORTS = ["devices", "backup-success", "changes", "top-changers", "compliance-trends"] as const;

function csvHref(c: Context<WebEnv>, name: (typeof REPORTS)[number]) {
  const url = new URL(c.req.url);
  return `/reports/${name}.csv${url.search}`;
}

/**
 * Reports as the API's /reports routes compute them (system.read; a scoped role's numbers count only its
 * devices): devices per vendor (or model, category ...), changes per day as a chart, the devices changing most,
 * backup success, compliance over time; each downloadable as CSV.
 */
export function registerReportsPage(web: Hono<WebEnv>): void {
  web.get("/reports", requirePage("system.read"), async (c) => {
    const { query, range } = readQuery(c);
    const { db, clock } = c.var.services;
    const { scope, abilities } = c.var.auth;
    const groupBy = query.group_by ?? "vendor";
    const days = (range.end - range.from) / DAY;
    // Each report as the page shows it (the fleet's totals, the first rows); the CSV links carry every row.
    const [stats, changes, top, backups, trends] = await Promise.all([
      deviceStatistics(db, scope, groupBy),
      changesPerDay(db, scope, range),
      topChangers(db, scope, range, 10),
      backupSummary(db, scope, range, 10),
      abilities.has("policycompliance.read")
        ? complianceTrends(
            db,
            scope,
            {
              from: new Date(range.from).toISOString().slice(0, 10),
              to: new Date(range.end - DAY).toISOString().slice(0, 10),
              group_by: days > 120 ? "week" : "day",
            },
            clock.now(),
            { failingRules: false },
          )
        : null,
    ]);
    const perDay = new Map(changes.map((r) => [r.date, r.changes]));
    const dayList = Array.from({ length: days }, (_, i) => new Date(range.from + i * DAY));
    const { attempts, succeeded, worst } = backups;
    const from = new Date(range.from).toISOString().slice(0, 10);
    const to = new Date(range.end - DAY).toISOString().slice(0, 10);
    return renderPage(c, 200, {
      title: "Reports",
      session: c.var.session,
      charts: true,
      children: (
        <>
          <section class="card">
            <h1>Reports</h1>
            <form method="get" action="/reports" class="filters">
              <div class="field">
                <label for="r-from">From</label>
                <input type="date" id="r-from" name="from" value={from} />
              </div>
              <div class="field">
                <label for="r-to">To</label>
                <input type="date" id="r-to" name="to" value={to} />
              </div>
              <div class="field">
                <label for="r-group">Devices by</label>
                <select id="r-group" name="group_by">
                  {DEVICE_GROUPS.map((g) => (
                    <option value={g} selected={g === groupBy}>
                      {g.replace("_", " ")}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field">
                <button type="submit">Show</button>
              </div>
            </form>
            <p class="muted">{`${from} to ${to} (UTC), ${plural(days, "day")}.`}</p>
          </section>
          <section class="card" id="changes">
            <h2>Configuration changes per day</h2>
            <Chart
              id="changes-chart"
              label={`New configuration versions per day, ${from} to ${to}`}
              x={dayList}
              y="changes"
              series={[
                {
                  label: "changes",
                  color: "#1f5fbf",
                  values: dayList.map((d) => perDay.get(d.toISOString().slice(0, 10)) ?? 0),
                },
              ]}
              fallback={`${plural(
                changes.reduce((n, r) => n + r.changes, 0),
                "change",
              )} in the range.`}
            />
            <p>
              <a href={csvHref(c, "changes")} download>
                Download changes per day and device (CSV)
              </a>
            </p>
            <h3>Devices changing most</h3>
            {top.rows.length ? (
              <div class="table-wrap">
                <table id="top-changers">
                  <thead>
                    <tr>
                      <th>Device</th>
                      <th>Changes</th>
                      <th>Last change</th>
                    </tr>
                  </thead>
                  <tbody>
                    {top.rows.map((r) => (
                      <tr>
                        <td>
                          <a href={`/devices/${r.device_id}`}>{r.device_name}</a>
                        </td>
                        <td>{plural(r.changes, "change")}</td>
                        <td>
                          <Time at={new Date(r.last_change_at)} none="" />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p class="muted">No configuration changed in the range.</p>
            )}
            <p>
              <a href={csvHref(c, "top-changers")} download>
                Download (CSV)
              </a>
            </p>
          </section>
          <section class="card" id="backups">
            <h2>Backup success</h2>
            <p id="backup-summary">
              {attempts
                ? `${plural(succeeded, "download")} of ${attempts} backed up their device (${Math.round((succeeded / attempts) * 1000) / 10} %), on ${plural(backups.devices, "device")}.`
                : "No download was attempted in the range."}
            </p>
            {worst.length > 0 && (
              <div class="table-wrap">
                <table id="backup-worst">
                  <thead>
                    <tr>
                      <th>Device</th>
                      <th>Backed up</th>
                      <th>Failed</th>
                    </tr>
                  </thead>
                  <tbody>
                    {worst.map((r) => (
                      <tr>
                        <td>
                          <a href={`/devices/${r.device_id}`}>{r.device_name}</a>
                        </td>
                        <td>{`${r.succeeded} of ${plural(r.attempts, "attempt")} (${r.success_percent} %)`}</td>
                        <td>{plural(r.failed, "time")}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <p>
              <a href={csvHref(c, "backup-success")} download>
                Download every device's backup success (CSV)
              </a>
            </p>
          </section>
          <section class="card" id="devices">
            <h2>{`Devices by ${groupBy.replace("_", " ")}`}</h2>
            <div class="table-wrap">
              <table id="device-stats">
                <thead>
                  <tr>
                    <th>{groupBy.replace("_", " ")}</th>
                    <th>Devices</th>
                  </tr>
                </thead>
                <tbody>
                  {stats.rows.slice(0, 50).map((r) => (
                    <tr>
                      <td>{r.value || <span class="muted">none</span>}</td>
                      <td>{plural(r.devices, "device")}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p>
              <a href={csvHref(c, "devices")} download>
                Download (CSV)
              </a>
            </p>
          </section>
          {trends && (
            <section class="card" id="compliance">
              <h2>Compliance over time</h2>
              {trends.periods.every((p) => p.compliant_percent === null) ? (
                <p class="muted">No device was evaluated in the range.</p>
              ) : (
                <Chart
                  id="compliance-chart"
                  label="Share of compliant devices"
                  x={trends.periods.map((p) => new Date(p.period_start))}
                  y="% compliant"
                  max={100}
                  series={[
                    { label: "% compliant", color: "#1d7a3a", values: trends.periods.map((p) => p.compliant_percent) },
                  ]}
                  fallback="The compliance chart needs JavaScript; the CSV holds the numbers."
                />
              )}
              <p>
                <a href={csvHref(c, "compliance-trends")} download>
                  Download (CSV)
                </a>
              </p>
            </section>
          )}
        </>
      ),
    });
  });

  web.get("/reports/:name{[a-z-]+\\.csv}", requirePage("system.read"), async (c) => {
    const name = c.req.param("name").replace(/\.csv$/, "") as (typeof REPORTS)[number];
    if (!REPORTS.includes(name)) return c.notFound();
    const { query, range } = readQuery(c);
    const { db, clock } = c.var.services;
    const { scope, abilities } = c.var.auth;
    switch (name) {
      case "devices":
        return reportAnswer(
          c,
          "device-statistics",
          "csv",
          await deviceStatistics(db, scope, query.group_by ?? "vendor"),
        );
      case "backup-success":
        return reportAnswer(c, name, "csv", await backupSuccess(db, scope, range));
      case "changes":
        return reportAnswer(c, name, "csv", await changeHistory(db, scope, range, "device"));
      case "top-changers":
        return reportAnswer(c, name, "csv", await topChangers(db, scope, range, 10));
      default: {
        if (!abilities.has("policycompliance.read")) return c.notFound();
        const trends = await complianceTrends(
          db,
          scope,
          { from: query.from, to: query.to, group_by: "day" },
          clock.now(),
        );
        return reportAnswer(c, name, "csv", {
          columns: [
            "period_start",
            "period_end",
            "devices",
            "compliant",
            "not_compliant",
            "not_evaluated",
            "compliant_percent",
          ],
          rows: trends.periods.map(({ failing_rules: _, ...p }) => p),
        });
      }
    }
  });
}

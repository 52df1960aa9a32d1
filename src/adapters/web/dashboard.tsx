import type { Hono } from "hono";
import { latestChanges } from "../../modules/configs/index.ts";
import {
  changePulse,
  complianceSummary,
  configInfo,
  deviceCounts,
  erroredDevices,
  latestDevices,
  queueInfo,
  taskStatus,
} from "../../modules/dashboard/index.ts";
import { healthFor, latestHealth } from "../../modules/system/index.ts";
import type { WebEnv } from "./env.ts";
import { Time } from "./format.tsx";
import { renderPage, webHeaders } from "./layout.tsx";
import { requirePage } from "./viewer.ts";
import { NextSteps } from "./next-steps.tsx";
import {
  ComplianceLoading,
  ComplianceWidget,
  LatestDevicesWidget,
  QueueWidget,
  TaskStatusWidget,
} from "./dashboard-widgets.tsx";
import { taskLinksOf } from "./fleet/task-context.ts";

/** Changes listed on the dashboard; the changes page has them all. */
const RECENT_CHANGES = 10;

type Day = { date: string; changes: number };

/** The change pulse as an inline SVG bar chart: drawn here, nothing fetched, one titled bar per day. */
export function PulseChart(props: { days: Day[] }) {
  const width = 720,
    height = 140,
    top = 16,
    bottom = 22;
  const max = Math.max(1, ...props.days.map((d) => d.changes));
  const slot = width / props.days.length;
  return (
    <svg
      class="pulse"
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={`Configuration changes per day, ${props.days[0]?.date} to ${props.days.at(-1)?.date}`}
    >
      <line x1="0" y1={height - bottom} x2={width} y2={height - bottom} stroke="#d8dee6" />
      <text x="0" y="11" font-size="11" fill="#5f6b7a">{`max ${max}`}</text>
      {props.days.map((d, i) => {
        const h = Math.round((d.changes / max) * (height - top - bottom));
        return (
          <rect
            class="pulse-day"
            data-date={d.date}
            data-changes={String(d.changes)}
            x={(i * slot + 2).toFixed(1)}
            y={String(height - bottom - h)}
            width={(slot - 4).toFixed(1)}
            height={String(h)}
            fill="#1f5fbf"
          >
            <title>{`${d.date}: ${d.changes} change${d.changes === 1 ? "" : "s"}`}</title>
          </rect>
        );
      })}
      <text x="0" y={height - 6} font-size="11" fill="#5f6b7a">
        {props.days[0]?.date}
      </text>
      <text x={width} y={height - 6} font-size="11" fill="#5f6b7a" text-anchor="end">
        {props.days.at(-1)?.date}
      </text>
    </svg>
  );
}

/**
 * The page a user lands on after login: the same figures as the dashboard API (same services, same scope: the
 * user's role), for any role with system.read; the latest changes too when the role may read configurations.
 */
export function registerDashboardPage(web: Hono<WebEnv>): void {
  // The compliance widget (GET /dashboard/compliance's figures): what htmx puts in the dashboard, or a page.
  web.get("/dashboard/compliance", requirePage("system.read"), async (c) => {
    const { db, clock } = c.var.services;
    const widget = (
      <ComplianceWidget
        summary={await complianceSummary(db, c.var.auth.scope, clock.now())}
        abilities={c.var.auth.abilities}
      />
    );
    if (c.req.header("HX-Request") === "true") {
      webHeaders(c);
      return c.html(widget);
    }
    return renderPage(c, 200, {
      title: "Compliance now",
      session: c.var.session,
      children: (
        <>
          <p class="muted">
            <a href="/dashboard">Dashboard</a>
          </p>
          {widget}
        </>
      ),
    });
  });

  web.get("/dashboard", requirePage("system.read"), async (c) => {
    const session = c.var.session;
    const { db, clock } = c.var.services;
    const { scope, abilities } = c.var.auth;
    const now = clock.now();
    const [counts, failing, changes, pulse, health, recent, queue, tasks, newest] = await Promise.all([
      deviceCounts(db, scope),
      erroredDevices(db, scope, 10),
      configInfo(db, scope, now),
      changePulse(db, scope, now),
      latestHealth(c.var.services).then((run) => healthFor(run, scope)),
      // The change list is the configs group's (configs.read), as in the API.
      abilities.has("configs.read") ? latestChanges(db, scope, RECENT_CHANGES) : null,
      queueInfo(db, scope, now),
      taskStatus(db, scope, taskLinksOf(c)),
      latestDevices(db, scope, 10),
    ]);
    // A device's name links to its page only for a role that may open it.
    const deviceLink = (id: number, name: string) =>
      abilities.has("devices.read") ? <a href={`/devices/${id}`}>{name}</a> : name;
    const tiles: [string, number][] = [
      ["Devices", counts.total],
      ["Up", counts.up],
      ["Failing", counts.failing],
      ["Never backed up", counts.never_backed_up],
      ["Disabled", counts.disabled],
    ];
    return renderPage(c, 200, {
      title: "Dashboard",
      session,
      children: (
        <>
          <section class="card">
            <h1>Dashboard</h1>
            <ul class="counts" id="device-counts">
              {tiles.map(([label, n]) => (
                <li>
                  <strong>{n}</strong>
                  {label}
                </li>
              ))}
            </ul>
          </section>
          {changes.versions_stored === 0 &&
            (await NextSteps({ c, devices: counts.total, versions: changes.versions_stored }))}
          <section class="card" id="failing-devices">
            <h2>Last download failed</h2>
            {/* Also the devices never backed up, which the tiles count apart from "Failing". */}
            <p class="muted">Enabled devices whose last download failed, including those never backed up.</p>
            {failing.length ? (
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th>Device</th>
                      <th>IP</th>
                      <th>Failed at</th>
                      <th>Reason</th>
                    </tr>
                  </thead>
                  <tbody>
                    {failing.map((d) => (
                      <tr>
                        <td>{deviceLink(d.device_id, d.device_name)}</td>
                        <td>{d.device_ip}</td>
                        <td>
                          <Time at={new Date(d.failed_at)} none="" />
                        </td>
                        <td>{d.reason}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p class="muted">No device's last backup failed.</p>
            )}
          </section>
          <section class="card" id="recent-changes">
            <h2>Recent changes</h2>
            <p>{`${changes.changes_24h} in the last 24 hours, ${changes.changes_7d} in 7 days; ${changes.versions_stored} versions stored for ${changes.devices_with_versions} devices.`}</p>
            <PulseChart days={pulse} />
            {recent &&
              (recent.length ? (
                <div class="table-wrap">
                  <table>
                    <thead>
                      <tr>
                        <th>When</th>
                        <th>Device</th>
                        <th>Command</th>
                        <th>Change</th>
                      </tr>
                    </thead>
                    <tbody>
                      {recent.map((r) => (
                        <tr>
                          <td>
                            <Time at={new Date(r.created_at)} none="" />
                          </td>
                          <td>{deviceLink(r.device_id, r.device_name)}</td>
                          <td>
                            <code>{r.command}</code>
                          </td>
                          <td>
                            {r.previous_config_id === null ? (
                              <a href={`/configs/${r.config_id}`}>{`v${r.version}`}</a>
                            ) : (
                              <a
                                href={`/configs/diff?from=${r.previous_config_id}&to=${r.config_id}`}
                              >{`v${r.previous_version} → v${r.version} (+${r.lines_added} -${r.lines_removed})`}</a>
                            )}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              ) : (
                <p class="muted">No configuration has changed yet.</p>
              ))}
            {recent && (
              <p>
                <a href="/changes">All changes</a>
              </p>
            )}
          </section>
          <ComplianceLoading />
          <TaskStatusWidget tasks={tasks} abilities={abilities} />
          <QueueWidget queue={queue} />
          <LatestDevicesWidget devices={newest} abilities={abilities} />
          <section class="card" id="health">
            <h2>
              Health <span class={`badge ${health.status}`}>{health.status}</span>
            </h2>
            <p class="muted">{`Checked ${health.ranAt.toISOString()}`}</p>
            <div class="table-wrap">
              <table>
                <tbody>
                  {health.checks.map((check) => (
                    <tr>
                      <td>{check.name}</td>
                      <td>
                        <span class={`badge ${check.status}`}>{check.status}</span>
                      </td>
                      <td>{check.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        </>
      ),
    });
  });
}

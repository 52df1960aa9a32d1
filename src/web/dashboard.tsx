import type { Hono } from "hono";
import { eq } from "drizzle-orm";
import { roles } from "../db/schema/index.ts";
import type { DeviceScope } from "../auth/scope.ts";
import { changePulse, configInfo, deviceCounts, erroredDevices } from "../modules/dashboard/service.ts";
import { latestHealth } from "../modules/system/checks.ts";
import type { WebEnv } from "./env.ts";
import { currentSession } from "./guard.ts";
import { renderPage, renderProblem } from "./layout.tsx";

type Day = { date: string; changes: number };

/** The change pulse as an inline SVG bar chart: drawn here, nothing fetched, one titled bar per day. */
export function PulseChart(props: { days: Day[] }) {
  const width = 720, height = 140, top = 16, bottom = 22;
  const max = Math.max(1, ...props.days.map((d) => d.changes));
  const slot = width / props.days.length;
  return (
    <svg class="pulse" viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Configuration changes per day, ${props.days[0]?.date} to ${props.days.at(-1)?.date}`}>
      <line x1="0" y1={height - bottom} x2={width} y2={height - bottom} stroke="#d8dee6" />
      <text x="0" y="11" font-size="11" fill="#5f6b7a">{`max ${max}`}</text>
      {props.days.map((d, i) => {
        const h = Math.round((d.changes / max) * (height - top - bottom));
        return (
          <rect class="pulse-day" data-date={d.date} data-changes={String(d.changes)} x={(i * slot + 2).toFixed(1)} y={String(height - bottom - h)} width={(slot - 4).toFixed(1)} height={String(h)} fill="#1f5fbf">
            <title>{`${d.date}: ${d.changes} change${d.changes === 1 ? "" : "s"}`}</title>
          </rect>
        );
      })}
      <text x="0" y={height - 6} font-size="11" fill="#5f6b7a">{props.days[0]?.date}</text>
      <text x={width} y={height - 6} font-size="11" fill="#5f6b7a" text-anchor="end">{props.days.at(-1)?.date}</text>
    </svg>
  );
}

/**
 * The page a user lands on after login: the same figures as the dashboard API (same services, same scope: the
 * user's role), for any role with system.read.
 */
export function registerDashboardPage(web: Hono<WebEnv>): void {
  web.get("/dashboard", async (c) => {
    const session = await currentSession(c);
    if (!session) return c.redirect(`/login?next=${encodeURIComponent("/dashboard")}`, 302);
    const { db, clock } = c.var.services;
    const [role] = await db.select().from(roles).where(eq(roles.name, session.roleName));
    if (!role?.permissions.includes("system.read")) {
      return renderProblem(c, 403, { title: "No dashboard for your role", message: `The dashboard needs the system.read ability; the role '${session.roleName}' lacks it.` }, session);
    }
    const scope: DeviceScope = role.scopeAll ? { all: true } : { all: false, tagIds: role.scopeTagIds, categoryIds: role.scopeCategoryIds };
    const now = clock.now();
    const [counts, failing, changes, pulse, health] = await Promise.all([
      deviceCounts(db, scope), erroredDevices(db, scope, 10), configInfo(db, scope, now), changePulse(db, scope, now), latestHealth(c.var.services),
    ]);
    const tiles: [string, number][] = [["Devices", counts.total], ["Up", counts.up], ["Failing", counts.failing], ["Never backed up", counts.never_backed_up], ["Disabled", counts.disabled]];
    return renderPage(c, 200, {
      title: "Dashboard",
      session,
      children: (
        <>
          <section class="card">
            <h1>Dashboard</h1>
            <ul class="counts" id="device-counts">
              {tiles.map(([label, n]) => <li><strong>{n}</strong>{label}</li>)}
            </ul>
          </section>
          <section class="card" id="failing-devices">
            <h2>Failing devices</h2>
            {failing.length ? (
              <table>
                <thead><tr><th>Device</th><th>IP</th><th>Failed at</th><th>Reason</th></tr></thead>
                <tbody>
                  {failing.map((d) => <tr><td>{d.device_name}</td><td>{d.device_ip}</td><td>{d.failed_at}</td><td>{d.reason}</td></tr>)}
                </tbody>
              </table>
            ) : <p class="muted">No device's last backup failed.</p>}
          </section>
          <section class="card" id="recent-changes">
            <h2>Recent changes</h2>
            <p>{`${changes.changes_24h} in the last 24 hours, ${changes.changes_7d} in 7 days; ${changes.versions_stored} versions stored for ${changes.devices_with_versions} devices.`}</p>
            <PulseChart days={pulse} />
          </section>
          <section class="card" id="health">
            <h2>Health <span class={`badge ${health.status}`}>{health.status}</span></h2>
            <p class="muted">{`Checked ${health.ranAt.toISOString()}`}</p>
            <table>
              <tbody>
                {health.checks.map((check) => <tr><td>{check.name}</td><td><span class={`badge ${check.status}`}>{check.status}</span></td><td>{check.message}</td></tr>)}
              </tbody>
            </table>
          </section>
        </>
      ),
    });
  });
}

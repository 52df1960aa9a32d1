import type { complianceSummary, latestDevices, queueInfo, taskStatus } from "../../modules/dashboard/index.ts";
import type { Ability } from "../../platform/auth/abilities.ts";
import { plural } from "../../kernel/words.ts";
import { Time } from "./format.tsx";
import { DeviceStatus } from "./fleet/devices.tsx";

/*
 * The dashboard's widgets that mirror the dashboard API's compliance, queue, task-status and latest-devices
 * endpoints: each renders what its service answered, and links only to pages the role may open.
 */

type Abilities = { has(ability: Ability): boolean };
const at = (iso: string | null, none = "") => <Time at={iso ? new Date(iso) : null} none={none} />;

/** The fleet's compliance now (GET /dashboard/compliance). */
export function ComplianceWidget(props: {
  summary: Awaited<ReturnType<typeof complianceSummary>>;
  abilities: Abilities;
}) {
  const s = props.summary;
  const tiles: [string, number][] = [
    ["Compliant", s.compliant],
    ["Not compliant", s.not_compliant],
    ["Not evaluated", s.not_evaluated],
  ];
  return (
    <section class="card" id="compliance-summary">
      <h2>Compliance</h2>
      {s.devices === 0 ? (
        <p class="muted">No device has a compliance result yet.</p>
      ) : (
        <>
          <p>{`${s.compliant_percent ?? 0}% of ${plural(s.devices, "device")} with a result are compliant.`}</p>
          <ul class="counts">
            {tiles.map(([label, n]) => (
              <li>
                <strong>{n}</strong>
                {label}
              </li>
            ))}
          </ul>
          {s.failing_rules.length > 0 && (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Rule failing most</th>
                    <th>Devices</th>
                  </tr>
                </thead>
                <tbody>
                  {s.failing_rules.map((r) => (
                    <tr>
                      <td>{r.description || `rule ${r.rule} of policy ${r.policy_id}`}</td>
                      <td>{plural(r.devices, "device")}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
      {props.abilities.has("policycompliance.read") && (
        <p>
          <a href="/compliance">Compliance results</a>
        </p>
      )}
    </section>
  );
}

/**
 * Where the compliance widget goes while it loads: the fleet's state now is computed from the day's results
 * (every device evaluated today is read again), which at 10,000 devices takes longer than the rest of the
 * dashboard together, so htmx fetches it after the page is shown. Without JavaScript, the link opens it as a page.
 */
export function ComplianceLoading() {
  return (
    <section
      class="card"
      id="compliance-summary"
      data-loading="true"
      hx-get="/dashboard/compliance"
      hx-trigger="load"
      hx-swap="outerHTML"
    >
      <h2>Compliance</h2>
      <p class="muted">
        <a href="/dashboard/compliance">The fleet's compliance now</a> is being counted…
      </p>
    </section>
  );
}

/** Jobs waiting and running (GET /dashboard/queue). */
export function QueueWidget(props: { queue: Awaited<ReturnType<typeof queueInfo>> }) {
  const q = props.queue;
  const types = Object.entries(q.by_type);
  return (
    <section class="card" id="queue">
      <h2>Job queue</h2>
      <p>
        {`${plural(q.queued, "job")} queued, ${q.running} running`}
        {q.oldest_queued_seconds !== null && `; the oldest ready job has waited ${waited(q.oldest_queued_seconds)}`}.
      </p>
      {types.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Kind</th>
                <th>Queued</th>
                <th>Running</th>
              </tr>
            </thead>
            <tbody>
              {types.map(([type, n]) => (
                <tr>
                  <td>{type.replaceAll("_", " ")}</td>
                  <td>{n.queued}</td>
                  <td>{n.running}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** A wait in the largest whole unit that fits. */
function waited(seconds: number): string {
  if (seconds < 120) return plural(seconds, "second");
  if (seconds < 7_200) return plural(Math.floor(seconds / 60), "minute");
  if (seconds < 172_800) return plural(Math.floor(seconds / 3_600), "hour");
  return plural(Math.floor(seconds / 86_400), "day");
}

/** Each task the role sees with its latest run (GET /dashboard/task-status). */
export function TaskStatusWidget(props: { tasks: Awaited<ReturnType<typeof taskStatus>>; abilities: Abilities }) {
  const linked = props.abilities.has("tasks.read");
  return (
    <section class="card" id="task-status">
      <h2>Tasks</h2>
      {props.tasks.length ? (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Task</th>
                <th>Type</th>
                <th>Last run</th>
                <th>Started</th>
                <th>Finished</th>
              </tr>
            </thead>
            <tbody>
              {props.tasks.map((t) => (
                <tr data-id={String(t.task_id)}>
                  <td>
                    {linked ? <a href={`/tasks/${t.task_id}`}>{t.task_name}</a> : t.task_name}
                    {t.paused && <span class="badge disabled">paused</span>}
                  </td>
                  <td>{t.task_type.replaceAll("_", " ")}</td>
                  <td>
                    {t.last_run ? (
                      <span class={`badge run-${t.last_run.status}`}>{t.last_run.status}</span>
                    ) : (
                      <span class="muted">never run</span>
                    )}
                  </td>
                  <td>{at(t.last_run?.started_at ?? null)}</td>
                  <td>{t.last_run && at(t.last_run.finished_at, "running")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p class="muted">No task reaches your devices.</p>
      )}
    </section>
  );
}

/** The devices added last (GET /dashboard/latest-devices). */
export function LatestDevicesWidget(props: {
  devices: Awaited<ReturnType<typeof latestDevices>>;
  abilities: Abilities;
}) {
  const linked = props.abilities.has("devices.read");
  return (
    <section class="card" id="latest-devices">
      <h2>Latest devices</h2>
      {props.devices.length ? (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Device</th>
                <th>IP</th>
                <th>Status</th>
                <th>Added</th>
                <th>Last backup</th>
              </tr>
            </thead>
            <tbody>
              {props.devices.map((d) => (
                <tr>
                  <td>{linked ? <a href={`/devices/${d.device_id}`}>{d.device_name}</a> : d.device_name}</td>
                  <td class="mono">{d.device_ip}</td>
                  <td>
                    <DeviceStatus device={d} />
                  </td>
                  <td>{at(d.created_at)}</td>
                  <td>{at(d.last_backup_at, "never")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p class="muted">No device yet.</p>
      )}
    </section>
  );
}

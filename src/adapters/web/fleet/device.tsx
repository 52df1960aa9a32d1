import type { Hono } from "hono";
import type { Job } from "../../../platform/jobs/queue.ts";
import { deviceCompliance } from "../../../modules/compliance/index.ts";
import type { ConfigOut } from "../../../modules/configs/index.ts";
import { deviceHistory } from "../../../modules/configs/index.ts";
import type { DeviceOut } from "../../../modules/devices/index.ts";
import { deviceReferences, getDevice } from "../../../modules/devices/index.ts";
import { failureTranscript, missingTemplateWarning } from "../../../modules/devices/index.ts";
import { getVisibleJob, lastFailedDownload, requestDownloadNow } from "../../../modules/jobs/index.ts";
import { pathId } from "../path-id.ts";
import type { WebEnv } from "../env.ts";
import { formatBytes, Time } from "../format.tsx";
import { checkedForm, csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { requirePage } from "../viewer.ts";
import { DeviceStatus } from "./devices.tsx";
import { OUTCOME_ADVICE } from "./outcome-advice.ts";
import { DEVICE_DONE } from "./device-form.tsx";
import { DetectProposal, registerDeviceDetectRoutes } from "./device-detect.tsx";
import { FailureTranscript } from "./failure-transcript.tsx";

/** Versions shown on the device page; older ones are in the API (GET /configs/all-by-deviceid/{id}). */
const HISTORY_LIMIT = 200;

/** Which login the collector uses: a credential set by name, or the device's own username; never a secret. */
function credentialsInUse(device: DeviceOut, set: { name: string; username: string } | null): string {
  if (set) return `Credential set '${set.name}' (user ${set.username || "none"})`;
  const secrets = [device.has_password && "password", device.has_enable_password && "enable password"]
    .filter(Boolean)
    .join(" and ");
  return `Its own: user ${device.device_username || "none"}${secrets ? `, ${secrets} set` : ", no password set"}`;
}

export function JobProgress(props: { job: Job }) {
  const { job } = props;
  const done = job.state === "finished";
  const what = job.type === "detect" ? "Connection test" : "Download";
  return (
    <p
      id="download-progress"
      class={`alert ${done ? (job.outcome === "success" || job.outcome === "unchanged" ? "success" : "error") : "warning"}`}
      role="status"
      data-poll={done ? undefined : `/jobs/${job.id}/status`}
      data-done={`/devices/${job.deviceId}?job=${job.id}`}
    >
      {done
        ? `${what} ${job.id} finished: ${job.outcome}${job.message ? ` (${job.message})` : ""}`
        : `${what} ${job.id} ${job.state}…`}
      {!done && (
        <>
          {" "}
          <a href={`/devices/${job.deviceId}?job=${job.id}`}>Refresh</a>
        </>
      )}
    </p>
  );
}

/** What a role with devices.write may do to the device from its page. */
function DeviceActions(props: { device: DeviceOut; csrf: string }) {
  const { device, csrf } = props;
  return (
    <>
      <CsrfForm action={`/devices/${device.id}/test`} csrf={csrf} class="inline">
        <button type="submit" class="secondary">
          Test connection
        </button>
      </CsrfForm>
      <a class="button secondary" href={`/devices/${device.id}/edit`}>
        Edit
      </a>
      <a class="button secondary" href={`/devices/new?clone=${device.id}`}>
        Clone
      </a>
      <CsrfForm action={`/devices/${device.id}/${device.enabled ? "disable" : "enable"}`} csrf={csrf} class="inline">
        <button type="submit" class="secondary">
          {device.enabled ? "Disable" : "Enable"}
        </button>
      </CsrfForm>
      <CsrfForm
        action={`/devices/${device.id}/host-key`}
        csrf={csrf}
        class="inline"
        confirm="Trust the next SSH host key this device presents? Do this only when you know why its key changed."
      >
        <button type="submit" class="secondary">
          Accept new host key
        </button>
      </CsrfForm>
      <a class="button secondary" href={`/devices/${device.id}/host-key`}>
        Pin a host key
      </a>
      <a class="button danger" href={`/devices/${device.id}/delete`}>
        Delete
      </a>
    </>
  );
}

function History(props: { versions: ConfigOut[] }) {
  const byCommand = new Map<string, ConfigOut[]>();
  for (const v of props.versions) (byCommand.get(v.command) ?? byCommand.set(v.command, []).get(v.command)!).push(v);
  if (!byCommand.size) return <p class="muted">No configuration stored yet.</p>;
  return (
    <>
      {[...byCommand].map(([command, versions]) => (
        <>
          <h3>
            <code>{command}</code>
          </h3>
          <div class="table-wrap">
            <table class="history">
              <thead>
                <tr>
                  <th>Version</th>
                  <th>First seen</th>
                  <th>Last seen</th>
                  <th>Size</th>
                  <th>Lines</th>
                  <th>Compare</th>
                </tr>
              </thead>
              <tbody>
                {versions.map((v, i) => (
                  <tr>
                    <td>
                      <a href={`/configs/${v.id}`}>{`v${v.version}`}</a>
                      {v.latest && <span class="badge ok">latest</span>}
                    </td>
                    <td>
                      <Time at={new Date(v.first_seen_at)} none="" />
                    </td>
                    <td>
                      <Time at={new Date(v.last_seen_at)} none="" />
                    </td>
                    <td>{formatBytes(v.size)}</td>
                    <td>{v.lines}</td>
                    <td>
                      {versions[i + 1] ? (
                        <a
                          href={`/configs/diff?from=${versions[i + 1]!.id}&to=${v.id}`}
                        >{`changes since v${versions[i + 1]!.version}`}</a>
                      ) : (
                        ""
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ))}
    </>
  );
}

/**
 * A device: what it is, how netkeep logs in (never a secret), its stored versions per command, download now with
 * its progress, the last failure with what to do, and compliance. Each part needs the ability its API route needs.
 */
export function registerDevicePage(web: Hono<WebEnv>): void {
  web.get("/devices/:id", requirePage("devices.read"), async (c) => {
    const id = pathId(c.req.param("id"), "Device");
    const { db } = c.var.services;
    const { scope, abilities } = c.var.auth;
    const device = await getDevice(db, scope, id);
    const jobId = Number(c.req.query("job"));
    const [references, history, failure, compliance, job, templateWarning] = await Promise.all([
      deviceReferences(db, device),
      abilities.has("configs.read") ? deviceHistory(db, scope, id, HISTORY_LIMIT) : null,
      lastFailedDownload(db, id),
      abilities.has("policycompliance.read") ? deviceCompliance(db, scope, id) : null,
      abilities.has("configs.read") && Number.isSafeInteger(jobId) && jobId > 0
        ? getVisibleJob(db, scope, c.var.auth.userId, jobId).then(
            (j) => (j.deviceId === id ? j : null),
            () => null,
          )
        : null,
      missingTemplateWarning(db, device),
    ]);
    const { category, template, profile } = references;
    const login = credentialsInUse(device, references.credentialSet);
    // The device answers (status up) but every backup stops at its SSH host key: that, not "up", is its state.
    const hostKeyFailing =
      failure?.outcome === "host_key_changed" &&
      (!device.last_backup_at || new Date(device.last_backup_at) < failure.finishedAt!);
    const session = c.var.session;
    const done = DEVICE_DONE[c.req.query("done") ?? ""];
    const details: [string, unknown][] = [
      [
        "Address",
        <span class="mono">
          {device.device_ip}
          {device.device_port_override ? `:${device.device_port_override}` : ""}
        </span>,
      ],
      ["Vendor", device.device_vendor ?? ""],
      ["Model", device.device_model ?? ""],
      // Read by the last backup or detection (docs/discovery.md, Inventory): shown once something was read.
      ...(
        [
          ["Serial", device.device_serial],
          ["OS version", device.device_os_version],
          ["Host name", device.device_hostname],
        ] as const
      ).flatMap(([label, value]): [string, unknown][] => (value ? [[label, value]] : [])),
      ["Category", category ?? ""],
      ["Template", template ?? ""],
      ["Profile", profile ?? "default"],
      ["Tags", device.device_tags.join(", ")],
      ["Logs in with", login],
      [
        "Status",
        hostKeyFailing ? (
          <>
            <span class="badge status-unreachable">host key changed</span>{" "}
            <span class="muted">backups fail until the new key is accepted (see Last failure)</span>
          </>
        ) : (
          <DeviceStatus device={device} />
        ),
      ],
      ["Last seen", <Time at={device.last_seen_at ? new Date(device.last_seen_at) : null} none="never" />],
      ["Last backup", <Time at={device.last_backup_at ? new Date(device.last_backup_at) : null} none="never" />],
      ...Object.entries(device.custom ?? {}).map(([k, v]): [string, unknown] => [k, String(v)]),
      ...(device.notes ? [["Notes", device.notes] as [string, unknown]] : []),
    ];
    return renderPage(c, 200, {
      title: device.device_name,
      session,
      children: (
        <>
          <section class="card">
            <p class="muted">
              <a href="/devices">Devices</a>
            </p>
            <h1>{device.device_name}</h1>
            {done && (
              <p class="alert success" role="status">
                {done}
              </p>
            )}
            <dl class="details">
              {details.map(([k, v]) => (
                <>
                  <dt>{k}</dt>
                  <dd>{v}</dd>
                </>
              ))}
            </dl>
            {templateWarning && (
              <p class="alert warning" id="template-warning" role="status">
                {templateWarning}
              </p>
            )}
            <div class="actions">
              {abilities.has("configs.read") && (
                <CsrfForm action={`/devices/${id}/download-now`} csrf={session.csrfToken} class="inline">
                  <button type="submit" disabled={!device.enabled}>
                    Download now
                  </button>
                </CsrfForm>
              )}
              {abilities.has("devices.write") && <DeviceActions device={device} csrf={session.csrfToken} />}
              {abilities.has("configs.read") && !device.enabled && (
                <span class="muted">The device is disabled; enable it to download.</span>
              )}
            </div>
            {job && <JobProgress job={job} />}
            {job && <DetectProposal job={job} canApply={abilities.has("devices.write")} csrf={session.csrfToken} />}
          </section>
          <section class="card" id="last-failure">
            <h2>Last failure</h2>
            {failure ? (
              <>
                <p>
                  <strong>{failure.outcome}</strong> at <Time at={failure.finishedAt} none="" />
                  {failure.message && (
                    <>
                      : <span class="mono">{failure.message}</span>
                    </>
                  )}
                </p>
                <p>{(OUTCOME_ADVICE[failure.outcome!] ?? "").replace("{id}", String(id))}</p>
                {device.last_backup_at && new Date(device.last_backup_at) > failure.finishedAt! && (
                  <p class="muted">A later download succeeded.</p>
                )}
                {abilities.has("configs.read") && <FailureTranscript {...failureTranscript(failure)} />}
              </>
            ) : (
              <p class="muted">No download of this device has failed.</p>
            )}
          </section>
          {history && (
            <section class="card" id="backups">
              <h2>Backups</h2>
              <History versions={history.rows} />
              {history.total > HISTORY_LIMIT && (
                <p class="muted">{`The newest ${HISTORY_LIMIT} of ${history.total} versions are shown.`}</p>
              )}
            </section>
          )}
          {compliance && (
            <section class="card" id="compliance">
              <h2>
                Compliance {compliance.status && <span class={`badge ${compliance.status}`}>{compliance.status}</span>}
              </h2>
              {compliance.assignments.length ? (
                <table>
                  <thead>
                    <tr>
                      <th>Policy</th>
                      <th>Status</th>
                      <th>Score</th>
                    </tr>
                  </thead>
                  <tbody>
                    {compliance.assignments.map((a) => (
                      <tr>
                        <td>{a.policy_name}</td>
                        <td>{a.status ?? "not evaluated yet"}</td>
                        <td>{a.score ?? ""}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : (
                <p class="muted">No compliance policy covers this device.</p>
              )}
            </section>
          )}
        </>
      ),
    });
  });

  registerDeviceDetectRoutes(web);

  web.post("/devices/:id/download-now", requirePage("configs.read"), async (c) => {
    if (!(await checkedForm(c, c.var.session.csrfToken))) return csrfRefusal(c, c.var.session);
    const id = pathId(c.req.param("id"), "Device");
    const { db, clock } = c.var.services;
    const job = await requestDownloadNow(db, c.var.auth.scope, c.var.auth, id, clock.now());
    if (job.state === "queued") c.var.services.jobsQueued();
    return c.redirect(`/devices/${id}?job=${job.id}`, 303);
  });

  /** What the device page polls while a download runs. */
  web.get("/jobs/:id/status", requirePage("configs.read"), async (c) => {
    const job = await getVisibleJob(
      c.var.services.db,
      c.var.auth.scope,
      c.var.auth.userId,
      pathId(c.req.param("id"), "Job"),
    );
    c.header("Cache-Control", "no-store");
    return c.json({ id: job.id, state: job.state, outcome: job.outcome, message: job.message });
  });
}

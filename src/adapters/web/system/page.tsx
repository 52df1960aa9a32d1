import type { Context, Hono } from "hono";
import { ApiError } from "../../../platform/http/errors.ts";
import { refuseScopedBackups, removeBackup, takeBackup } from "../../../modules/backups/index.ts";
import { healthFor, latestHealth, runHealthChecks, type HealthRun } from "../../../modules/system/index.ts";
import { systemInfo } from "../../../modules/system/index.ts";
import { BackupRefused, backupStream, findBackup, listBackups } from "../../../db/backup.ts";
import { plural } from "../../../kernel/words.ts";
import type { WebEnv } from "../env.ts";
import { readForm } from "../form.tsx";
import { formatBytes, Time } from "../format.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { requirePage } from "../viewer.ts";

const DONE: Record<string, string> = {
  checked: "Health checks ran: the results below are this pass.",
  backup: "Database backup made.",
  deleted: "Database backup deleted.",
};

const STATE: Record<string, string> = { ok: "ok", warning: "warning", failed: "failed" };

async function systemPage(c: Context<WebEnv>, run: HealthRun, refusal?: string) {
  const { services, auth } = c.var;
  const canWrite = auth.abilities.has("system.write");
  const info = await systemInfo(services, auth.scope);
  const health = healthFor(run, auth.scope);
  // Backups hold every device: a scoped role sees none of them (as the API answers it 403).
  const backups = auth.scope.all ? listBackups(services.config.storageDir) : null;
  const done = DONE[c.req.query("done") ?? ""];
  return renderPage(c, refusal ? 409 : 200, {
    title: "System",
    session: c.var.session,
    children: (
      <>
        <section class="card" id="health">
          <h1>System</h1>
          {done && (
            <p class="alert success" role="status">
              {done}
            </p>
          )}
          {refusal && (
            <p class="alert error" role="alert">
              {refusal}
            </p>
          )}
          <dl class="details">
            <dt>Version</dt>
            <dd>{info.version}</dd>
            <dt>Runtime</dt>
            <dd>{`${info.runtime.name} ${info.runtime.version}`}</dd>
            <dt>Database</dt>
            <dd>{`${info.database.kind}, ${formatBytes(info.database.size_bytes)}`}</dd>
            <dt>Collectors</dt>
            <dd>
              {info.collectors.length
                ? info.collectors
                    .map((x) => `${x.host} (pid ${x.pid}, ${x.fresh ? "heard from lately" : "silent"})`)
                    .join("; ")
                : "none running"}
            </dd>
            <dt>Jobs queued</dt>
            <dd>{String(info.queue_depth)}</dd>
          </dl>
          <h2>
            Health: <span class={`badge ${health.status}`}>{STATE[health.status]}</span>
          </h2>
          <p class="muted">
            Checked <Time at={health.ranAt} none="never" /> ({health.trigger === "api" ? "on request" : "on schedule"}
            ). The checks run every 5 minutes.
          </p>
          {canWrite && (
            <CsrfForm action="/system/health/run" csrf={c.var.session.csrfToken}>
              <button type="submit" class="secondary">
                Run the checks now
              </button>
            </CsrfForm>
          )}
          <div class="table-wrap">
            <table id="health-checks">
              <thead>
                <tr>
                  <th>Check</th>
                  <th>State</th>
                  <th>What was found</th>
                </tr>
              </thead>
              <tbody>
                {health.checks.map((x) => (
                  <tr>
                    <td>{x.name.replace(/_/g, " ")}</td>
                    <td>
                      <span class={`badge ${x.status}`}>{STATE[x.status]}</span>
                    </td>
                    <td>{x.message}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
        {backups && (
          <section class="card" id="backups">
            <h2>Database backups</h2>
            <p class="muted">
              {`Copies of the whole database, kept in the storage folder (${plural(backups.length, "backup")}). The oldest beyond the number the settings keep are deleted after each new one.`}
            </p>
            {canWrite && (
              <CsrfForm action="/system/backups" csrf={c.var.session.csrfToken}>
                <button type="submit">Make a backup now</button>
              </CsrfForm>
            )}
            {backups.length ? (
              <div class="table-wrap">
                <table id="backup-list">
                  <thead>
                    <tr>
                      <th>File</th>
                      <th>Made</th>
                      <th>Size</th>
                      <th>SHA-256</th>
                      {canWrite && (
                        <th>
                          <span class="visually-hidden">Actions</span>
                        </th>
                      )}
                    </tr>
                  </thead>
                  <tbody>
                    {backups.map((x) => (
                      <tr>
                        <td>
                          <a href={`/system/backups/${x.name}/download`} download>
                            {x.name}
                          </a>
                        </td>
                        <td>
                          <Time at={x.createdAt} none="" />
                        </td>
                        <td>{formatBytes(x.bytes)}</td>
                        <td class="mono" title={x.sha256}>
                          {`${x.sha256.slice(0, 16)}…`}
                        </td>
                        {canWrite && (
                          <td>
                            <a href={`/system/backups/${x.name}/delete`}>Delete</a>
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p class="muted">No database backup yet.</p>
            )}
          </section>
        )}
      </>
    ),
  });
}

/**
 * System: version, database, collectors, the health checks (latest pass; **Run the checks now** with
 * system.write) and database backups (list and download with system.read, make and delete (after a confirmation
 * page) with system.write; a role that sees only some devices sees none, as the API refuses it).
 */
export function registerSystemPage(web: Hono<WebEnv>): void {
  web.get("/system", requirePage("system.read"), async (c) => systemPage(c, await latestHealth(c.var.services)));

  web.post("/system/health/run", requirePage("system.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    await runHealthChecks(c.var.services, "api");
    return c.redirect("/system?done=checked", 303);
  });

  web.post("/system/backups", requirePage("system.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    refuseScopedBackups(c.var.auth.scope);
    const { db, config, clock } = c.var.services;
    try {
      await takeBackup(db, config, clock.now(), c.var.auth);
    } catch (err) {
      if (err instanceof BackupRefused) return systemPage(c, await latestHealth(c.var.services), err.message);
      throw err;
    }
    return c.redirect("/system?done=backup#backups", 303);
  });

  const backupNamed = (c: Context<WebEnv>) => {
    refuseScopedBackups(c.var.auth.scope);
    const name = c.req.param("name")!;
    const backup = findBackup(c.var.services.config.storageDir, name);
    if (!backup) throw ApiError.notFound(`Backup ${name.slice(0, 60)}`);
    return backup;
  };

  web.get("/system/backups/:name/download", requirePage("system.read"), async (c) => {
    const backup = backupNamed(c);
    c.header("Cache-Control", "no-store");
    return c.body(backupStream(backup), 200, {
      "Content-Type": "application/gzip",
      "Content-Length": String(backup.bytes),
      "Content-Disposition": `attachment; filename="${backup.name}"`,
      "X-Checksum-SHA256": backup.sha256,
    });
  });

  web.get("/system/backups/:name/delete", requirePage("system.write"), (c) => {
    const backup = backupNamed(c);
    return renderPage(c, 200, {
      title: `Delete ${backup.name}`,
      session: c.var.session,
      children: (
        <section class="card">
          <h1>Delete this database backup?</h1>
          <dl class="details">
            <dt>File</dt>
            <dd id="backup-name">{backup.name}</dd>
            <dt>Made</dt>
            <dd>
              <Time at={backup.createdAt} none="" />
            </dd>
            <dt>Size</dt>
            <dd>{formatBytes(backup.bytes)}</dd>
          </dl>
          <p>The file and its checksum are removed from the storage folder; this cannot be undone.</p>
          <CsrfForm action={`/system/backups/${backup.name}/delete`} csrf={c.var.session.csrfToken}>
            <div class="actions">
              <button type="submit" class="danger">
                Delete the backup
              </button>
              <a href="/system#backups">Cancel</a>
            </div>
          </CsrfForm>
        </section>
      ),
    });
  });

  web.post("/system/backups/:name/delete", requirePage("system.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const backup = backupNamed(c);
    const { db, config, clock } = c.var.services;
    await removeBackup(db, config, clock.now(), c.var.auth, backup.name);
    return c.redirect("/system?done=deleted#backups", 303);
  });
}

import type { Context, Hono } from "hono";
import { listEnvelope, parseListQuery } from "../../../platform/http/list.ts";
import { redeployFailures } from "../../../modules/snippets/index.ts";
import {
  DEPLOYMENT_DEVICE_STATUSES,
  deploymentDeviceListSpec,
  deploymentDevicesOf,
  deploymentListSpec,
  getDeployment,
  listDeploymentDevices,
  listDeployments,
  visibleDeployments,
  type Links,
} from "../../../modules/snippets/index.ts";
import { plural } from "../../../kernel/words.ts";
import { deployActorOf } from "./deploy-actor.ts";
import type { WebEnv } from "../env.ts";
import { readForm } from "../form.tsx";
import { Time } from "../format.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage, webHeaders } from "../layout.tsx";
import { Pager, withoutEmptyFields } from "../list-page.tsx";
import { pathId } from "../path-id.ts";
import { routeQuery } from "../route-query.ts";
import { listQuerySchema } from "../../../platform/http/list.ts";
import { requirePage } from "../viewer.ts";

type Deployment = Awaited<ReturnType<typeof getDeployment>>;

const linksOf = (c: Context<WebEnv>): Links => ({ base: new URL(c.req.url).origin, version: "v1" });

/** How a device's push went, in words. */
const STATUS_WORDS: Record<string, string> = {
  pending: "waiting",
  queued: "queued",
  success: "pushed",
  failed: "refused",
  error: "could not run",
  skipped: "skipped",
};
const BADGE: Record<string, string> = {
  success: "ok",
  failed: "failed",
  error: "failed",
  queued: "warning",
  pending: "",
  skipped: "",
};

/** A unified diff with its added and removed lines marked. */
function DiffText(props: { diff: string }) {
  const kind = (line: string) =>
    line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "added" : line.startsWith("-") ? "removed" : undefined;
  return (
    <pre class="diff-text">
      {props.diff
        .replace(/\n$/, "")
        .split("\n")
        .map((line) => (
          <span class={kind(line)}>{line}</span>
        ))}
    </pre>
  );
}

function Counts(props: { d: Deployment }) {
  return (
    <ul class="progress" aria-label="Devices by state">
      {DEPLOYMENT_DEVICE_STATUSES.filter((s) => props.d.device_counts[s] > 0).map((s) => (
        <li class={`badge ${BADGE[s]}`} data-status={s}>
          {`${STATUS_WORDS[s]}: ${props.d.device_counts[s]}`}
        </li>
      ))}
    </ul>
  );
}

/**
 * The part of a deployment's page that changes while it runs: its state, the counts and each device's outcome.
 * While running it asks htmx to fetch itself again every 2 seconds (and replace itself); finished, it stops.
 */
async function Progress(c: Context<WebEnv>, d: Deployment) {
  routeQuery({ request: { query: listQuerySchema(deploymentDeviceListSpec) } }, c.req.query());
  const q = parseListQuery(c, deploymentDeviceListSpec, deploymentDevicesOf(d.id, c.var.auth.scope));
  const q100 = { ...q, perPage: c.req.query("per_page") ? q.perPage : 100 };
  const { total, rows } = await listDeploymentDevices(c.var.services.db, q100);
  const { meta } = listEnvelope(c, q100, total, rows);
  const running = d.state === "running";
  const failed = d.device_counts.failed + d.device_counts.error;
  const search = new URL(c.req.url).search;
  return (
    <section
      class="card"
      id="progress"
      aria-live="polite"
      hx-get={running ? `/snippets/deployments/${d.id}/progress${search}` : undefined}
      hx-trigger={running ? "every 2s" : undefined}
      hx-swap={running ? "outerHTML" : undefined}
    >
      <h2>{running ? "Pushing…" : "Finished"}</h2>
      <Counts d={d} />
      {d.stopped_reason && <p class="alert warning">{d.stopped_reason}</p>}
      {!running && failed > 0 && c.var.auth.abilities.has("snippets.write") && (
        <CsrfForm
          action={`/snippets/deployments/${d.id}/rerun`}
          csrf={c.var.session.csrfToken}
          confirm={`Push again to the ${plural(failed, "device")} that failed?`}
        >
          <button type="submit">{`Re-run the ${plural(failed, "failed device")}`}</button>
        </CsrfForm>
      )}
      <Pager c={c} meta={meta} noun="devices" />
      <div class="table-wrap">
        <table id="deployment-devices">
          <thead>
            <tr>
              <th>Device</th>
              <th>State</th>
              <th>What happened</th>
              <th>Finished</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const result = (r.result ?? {}) as Record<string, unknown>;
              const failedLine = result.failed_line as { line?: string; answer?: string } | undefined;
              return (
                <tr data-device={r.device_name}>
                  <td>{r.device_id ? <a href={`/devices/${r.device_id}`}>{r.device_name}</a> : r.device_name}</td>
                  <td>
                    <span class={`badge ${BADGE[r.status]}`}>{STATUS_WORDS[r.status] ?? r.status}</span>
                  </td>
                  <td>
                    {r.message && <div>{r.message}</div>}
                    {failedLine && (
                      <div class="muted">
                        refused <code>{failedLine.line ?? ""}</code>: {failedLine.answer ?? ""}
                      </div>
                    )}
                    <details class="output">
                      <summary>{`Lines sent (${plural(r.lines.length, "line")})`}</summary>
                      <pre>{r.lines.join("\n")}</pre>
                    </details>
                    {r.transcript && (
                      <details class="output">
                        <summary>Output</summary>
                        <pre class="transcript">{r.transcript}</pre>
                      </details>
                    )}
                    {typeof result.diff === "string" && (
                      <details class="output" open={result.diff !== "" && r.status === "success"}>
                        <summary>Configuration before and after</summary>
                        {result.diff ? <DiffText diff={result.diff} /> : <p class="muted">No change.</p>}
                      </details>
                    )}
                  </td>
                  <td>
                    <Time at={r.finished_at ? new Date(r.finished_at) : null} none="" />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Deployments: the list, one deployment with its live progress, and the re-run of its failed devices. */
export function registerDeploymentPages(web: Hono<WebEnv>): void {
  const read = requirePage("snippets.read");
  const deploymentOf = (c: Context<WebEnv>) =>
    getDeployment(c.var.services.db, c.var.auth.scope, linksOf(c), pathId(c.req.param("id")!, "Snippet deployment"));

  web.get("/snippets/deployments", read, async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    routeQuery({ request: { query: listQuerySchema(deploymentListSpec) } }, c.req.query());
    const q = parseListQuery(c, deploymentListSpec, [visibleDeployments(c.var.auth.scope)]);
    const { total, rows } = await listDeployments(c.var.services.db, c.var.auth.scope, linksOf(c), q);
    const { meta } = listEnvelope(c, q, total, rows);
    return renderPage(c, 200, {
      title: "Deployments",
      session: c.var.session,
      children: (
        <section class="card">
          <p class="muted">
            <a href="/snippets">Snippets</a>
          </p>
          <h1>Deployments</h1>
          <Pager c={c} meta={meta} noun="deployments" />
          {rows.length ? (
            <div class="table-wrap">
              <table id="deployment-list">
                <thead>
                  <tr>
                    <th>Started</th>
                    <th>Snippet</th>
                    <th>State</th>
                    <th>Devices</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((d) => (
                    <tr>
                      <td>
                        <a href={`/snippets/deployments/${d.id}`}>
                          <Time at={new Date(d.created_at)} none="" />
                        </a>
                      </td>
                      <td>{d.snippet_name}</td>
                      <td>{d.state}</td>
                      <td>
                        <Counts d={d} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p class="muted">No deployment yet.</p>
          )}
        </section>
      ),
    });
  });

  web.get("/snippets/deployments/:id", read, async (c) => {
    const d = await deploymentOf(c);
    const done = c.req.query("done") === "rerun" ? "A new deployment pushes again to the failed devices." : null;
    return renderPage(c, 200, {
      title: `Deployment of ${d.snippet_name}`,
      session: c.var.session,
      children: (
        <>
          <section class="card">
            <p class="muted">
              <a href="/snippets/deployments">Deployments</a>
            </p>
            <h1>{`Deployment of ${d.snippet_name}`}</h1>
            {done && (
              <p class="alert success" role="status">
                {done}
              </p>
            )}
            <dl class="details">
              <dt>Snippet</dt>
              <dd>{d.snippet_id ? <a href={`/snippets/${d.snippet_id}`}>{d.snippet_name}</a> : d.snippet_name}</dd>
              <dt>Started</dt>
              <dd>
                <Time at={new Date(d.created_at)} none="" />
              </dd>
              <dt>Guard rails</dt>
              <dd>
                {`${d.canary ? `canary of ${plural(d.canary, "device")}, ` : ""}${d.stop_on_failure ? "stops after a failure, " : ""}${d.concurrency} at once`}
              </dd>
            </dl>
            <p class="muted">Without JavaScript the state below does not change by itself: reload the page.</p>
          </section>
          {await Progress(c, d)}
        </>
      ),
    });
  });

  web.get("/snippets/deployments/:id/progress", read, async (c) => {
    const d = await deploymentOf(c);
    webHeaders(c);
    return c.html(await Progress(c, d));
  });

  web.post("/snippets/deployments/:id/rerun", requirePage("snippets.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const d = await deploymentOf(c);
    const id = await redeployFailures(deployActorOf(c), d.id);
    return c.redirect(`/snippets/deployments/${id}?done=rerun`, 303);
  });
}

import type { Hono } from "hono";
import { COMPLIANCE_STATUSES } from "../../../modules/compliance/index.ts";
import { listEnvelope } from "../../../platform/http/list.ts";
import { assignmentsResource, changeableAssignments, changeablePolicies } from "../../../modules/compliance/index.ts";
import { exportResults } from "../../../modules/compliance/index.ts";
import { policiesResource } from "../../../modules/compliance/index.ts";
import { listResults, resultListSpec, type ResultOut } from "../../../modules/compliance/index.ts";
import { complianceTrends } from "../../../modules/compliance/index.ts";
import { plural } from "../../../kernel/words.ts";
import { Chart } from "../chart.tsx";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { CsrfForm, renderPage } from "../layout.tsx";
import { hrefWith, Pager, withoutEmptyFields, pageListQuery } from "../list-page.tsx";
import { requirePage } from "../viewer.ts";
import { BulkDeleteForm, bulkDeletedMessage, registerBulkDelete, SelectBox } from "../inventory/bulk-delete.tsx";
import { POLICIES_BULK } from "./policy-bulk.ts";
import { AssignmentForm, assignmentChoices, scopeWords } from "./assignment-form.tsx";
import { FailingRules, StateBadge, STATE_WORDS } from "./words.tsx";

const ALL = { page: 1, perPage: 500, where: undefined, orderBy: [], fields: null };

const DONE: Record<string, string> = {
  "policy-created": "Policy added.",
  "policy-saved": "Policy saved.",
  "policy-deleted": "Policy deleted.",
  "policy-copied": "Policy copied: edit the copy.",
  "assignment-created": "Assignment added.",
  "assignment-deleted": "Assignment deleted.",
  "assignment-saved": "Assignment saved.",
  "assignment-enabled": "Assignment enabled: it judges its devices again.",
  "assignment-disabled": "Assignment disabled: it judges nothing until enabled again.",
  run: "Evaluation queued: the results below change as it finishes (a collector runs it).",
};

/** The fleet's compliant share per day over the last 30 days, as a chart and as a table. */
function Trend(props: { trends: Awaited<ReturnType<typeof complianceTrends>> }) {
  const { trends } = props;
  const evaluated = trends.periods.filter((p) => p.compliant + p.not_compliant > 0);
  return (
    <section class="card" id="trend">
      <h2>Fleet trend</h2>
      {evaluated.length ? (
        <>
          <Chart
            id="trend-chart"
            label={`Compliant devices per day, ${trends.from} to ${trends.to}`}
            x={trends.periods.map((p) => new Date(p.period_start))}
            y="devices"
            series={[
              { label: "compliant", color: "#1d7a3a", values: trends.periods.map((p) => p.compliant) },
              { label: "not compliant", color: "#b3261e", values: trends.periods.map((p) => p.not_compliant) },
            ]}
            fallback="The chart needs JavaScript; the table below holds the same numbers."
          />
          <details>
            <summary>The numbers</summary>
            <div class="table-wrap">
              <table id="trend-table">
                <thead>
                  <tr>
                    <th>Day</th>
                    <th>Compliant</th>
                    <th>Not compliant</th>
                    <th>Share compliant</th>
                  </tr>
                </thead>
                <tbody>
                  {evaluated.map((p) => (
                    <tr>
                      <td>{p.period_start.slice(0, 10)}</td>
                      <td>{plural(p.compliant, "device")}</td>
                      <td>{plural(p.not_compliant, "device")}</td>
                      <td>{p.compliant_percent === null ? "" : `${p.compliant_percent} %`}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </details>
        </>
      ) : (
        <p class="muted">No device has been evaluated in the last 30 days.</p>
      )}
    </section>
  );
}

function ResultsTable(props: { rows: ResultOut[] }) {
  return (
    <div class="table-wrap">
      <table id="result-list">
        <thead>
          <tr>
            <th>Device</th>
            <th>Policy</th>
            <th>State</th>
            <th>Rules passed</th>
            <th>Failing rules and their fix</th>
            <th>Evaluated</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr data-id={String(r.id)}>
              <td>
                <a href={`/devices/${r.device_id}`}>{r.device_name}</a>
              </td>
              <td>{r.policy_name}</td>
              <td>
                <StateBadge status={r.status} />
              </td>
              <td>{`${r.passed_rules} of ${plural(r.total_rules, "rule")}`}</td>
              <td class="wide">
                <FailingRules rules={r.rules} limit={3} />
                <a href={`/compliance/results/${r.id}`}>Details</a>
              </td>
              <td>
                <Time at={new Date(r.evaluated_at)} none="" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * Compliance: policies (GET /policies) with their editor, assignments, runs, the fleet's trend and the devices'
 * results (GET /policy-compliance, in the caller's scope) with the failing lines and their remediation; export.
 */
export function registerCompliancePage(web: Hono<WebEnv>): void {
  registerBulkDelete(web, POLICIES_BULK);
  web.get("/compliance", requirePage("policycompliance.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const { db } = c.var.services;
    const { scope, abilities } = c.var.auth;
    const canWrite = abilities.has("policycompliance.write");
    const q = pageListQuery(c, resultListSpec);
    const [policies, assignments, results, choices, trends] = await Promise.all([
      policiesResource.list(db, scope, ALL),
      assignmentsResource.list(db, scope, ALL),
      listResults(db, scope, q),
      canWrite ? assignmentChoices(c) : null,
      complianceTrends(db, scope, {}, c.var.services.clock.now(), { failingRules: false }),
    ]);
    const { meta } = listEnvelope(c, q, results.total, results.rows);
    // A scoped user's controls only on the assignments reaching none but their devices (the API refuses the rest).
    const changeable = canWrite
      ? await changeableAssignments(
          db,
          scope,
          assignments.rows.map((a) => a.id),
        )
      : new Set<number>();
    // Likewise a policy's Edit and Delete: only on those whose assignments judge none but the caller's devices.
    const mayChange = canWrite
      ? await changeablePolicies(
          db,
          scope,
          policies.rows.map((p) => p.id),
        )
      : new Set<number>();
    const done = DONE[c.req.query("done") ?? ""] ?? bulkDeletedMessage(c, POLICIES_BULK);
    const exportQuery = new URL(c.req.url).search.replace(/^\?/, "");
    const status = c.req.query("filter[status]") ?? "";
    return renderPage(c, 200, {
      title: "Compliance",
      session: c.var.session,
      charts: true,
      children: (
        <>
          <section class="card" id="policies">
            <h1>Compliance</h1>
            {done && (
              <p class="alert success" role="status">
                {done}
              </p>
            )}
            <h2>Policies</h2>
            {canWrite && (
              <p class="actions">
                <a class="button" href="/compliance/policies/new">
                  Add a policy
                </a>
              </p>
            )}
            {policies.rows.length ? (
              // Inside the bulk form, a row's buttons send it to their own address (formaction): forms do not nest.
              <BulkDeleteForm c={c} spec={POLICIES_BULK}>
                <div class="table-wrap">
                  <table id="policy-list">
                    <thead>
                      <tr>
                        {canWrite && (
                          <th>
                            <span class="visually-hidden">Select</span>
                          </th>
                        )}
                        <th>Policy</th>
                        <th>Vendor</th>
                        <th>Rules</th>
                        <th>Assignments</th>
                        {canWrite && (
                          <th>
                            <span class="visually-hidden">Actions</span>
                          </th>
                        )}
                      </tr>
                    </thead>
                    <tbody>
                      {policies.rows.map((p) => {
                        const changeable = !p.builtin && mayChange.has(p.id);
                        return (
                          <tr data-id={String(p.id)}>
                            {canWrite && <td>{changeable && <SelectBox id={p.id} name={String(p.name)} />}</td>}
                            <td class="wide">
                              <strong>{String(p.name)}</strong>
                              {p.builtin ? <span class="badge">built-in</span> : null}
                              <div class="muted">{String(p.description)}</div>
                            </td>
                            <td>{String(p.vendor)}</td>
                            <td>{plural(Number(p.rules_count), "rule")}</td>
                            <td>{plural(Number(p.assignments_count), "assignment")}</td>
                            {canWrite && (
                              <td>
                                <div class="row-form">
                                  {changeable && <a href={`/compliance/policies/${p.id}/edit`}>Edit</a>}
                                  <button
                                    type="submit"
                                    class="link-button"
                                    formaction={`/compliance/policies/${p.id}/copy`}
                                  >
                                    Copy
                                  </button>
                                  <button
                                    type="submit"
                                    class="link-button"
                                    formaction={`/compliance/policies/${p.id}/run`}
                                  >
                                    Run
                                  </button>
                                  {changeable && (
                                    <button
                                      type="submit"
                                      class="link-button"
                                      formaction={`/compliance/policies/${p.id}/delete`}
                                      data-confirm={`Delete the policy ${String(p.name)}?`}
                                    >
                                      Delete
                                    </button>
                                  )}
                                </div>
                              </td>
                            )}
                          </tr>
                        );
                      })}
                    </tbody>
                  </table>
                </div>
              </BulkDeleteForm>
            ) : (
              <p class="muted">No policy yet.</p>
            )}
          </section>
          <section class="card" id="assignments">
            <h2>Assignments</h2>
            <p class="muted">Which devices each policy judges, and whether a new backup is checked at once.</p>
            {assignments.rows.length ? (
              <div class="table-wrap">
                <table id="assignment-list">
                  <thead>
                    <tr>
                      <th>Policy</th>
                      <th>Devices</th>
                      <th>Command</th>
                      <th>State</th>
                      {canWrite && (
                        <th>
                          <span class="visually-hidden">Actions</span>
                        </th>
                      )}
                    </tr>
                  </thead>
                  <tbody>
                    {assignments.rows.map((a) => (
                      <tr data-id={String(a.id)}>
                        <td>
                          <strong>{String(a.policy_name)}</strong>
                          <div class="muted">{String(a.description)}</div>
                        </td>
                        <td>{scopeWords(a, choices)}</td>
                        <td>
                          {a.command ? <code>{String(a.command)}</code> : <span class="muted">configuration</span>}
                        </td>
                        <td>
                          {a.enabled ? "enabled" : "disabled"}
                          {a.run_on_backup ? ", after each backup" : ""}
                        </td>
                        {canWrite && (
                          <td>
                            {changeable.has(a.id) && (
                              <div class="row-form">
                                <a href={`/compliance/assignments/${a.id}/edit`}>Edit</a>
                                <CsrfForm
                                  action={`/compliance/assignments/${a.id}/enabled`}
                                  csrf={c.var.session.csrfToken}
                                  class="inline"
                                >
                                  <input type="hidden" name="enabled" value={a.enabled ? "false" : "true"} />
                                  <button type="submit" class="link-button">
                                    {a.enabled ? "Disable" : "Enable"}
                                  </button>
                                </CsrfForm>
                                <CsrfForm
                                  action={`/compliance/assignments/${a.id}/run`}
                                  csrf={c.var.session.csrfToken}
                                  class="inline"
                                >
                                  <button type="submit" class="link-button">
                                    Run
                                  </button>
                                </CsrfForm>
                                <CsrfForm
                                  action={`/compliance/assignments/${a.id}/delete`}
                                  csrf={c.var.session.csrfToken}
                                  class="inline"
                                  confirm="Delete this assignment and its results?"
                                >
                                  <button type="submit" class="link-button">
                                    Delete
                                  </button>
                                </CsrfForm>
                              </div>
                            )}
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p class="muted">No assignment yet: a policy judges no device until it is assigned.</p>
            )}
            {canWrite && choices && policies.rows.length > 0 && (
              <details open={c.req.query("assign") === "1"}>
                <summary>Assign a policy</summary>
                <AssignmentForm c={c} choices={choices} policies={policies.rows} values={{}} />
              </details>
            )}
          </section>
          <Trend trends={trends} />
          <section class="card" id="results">
            <h2>Results</h2>
            <form method="get" action="/compliance#results" class="filters" role="search">
              <div class="field">
                <label for="result-status">State</label>
                <select id="result-status" name="filter[status]">
                  <option value="">any</option>
                  {COMPLIANCE_STATUSES.map((s) => (
                    <option value={s} selected={status === s}>
                      {STATE_WORDS[s]}
                    </option>
                  ))}
                </select>
              </div>
              <div class="field">
                <label class="check">
                  <input
                    type="checkbox"
                    name="filter[latest]"
                    value="true"
                    checked={c.req.query("filter[latest]") === "true"}
                  />{" "}
                  Current results only
                </label>
              </div>
              <div class="field">
                <button type="submit">Apply</button>
              </div>
              <div class="field">
                <a href={`/compliance/export?${exportQuery ? `${exportQuery}&` : ""}format=csv`} download>
                  Export CSV
                </a>{" "}
                <a href={`/compliance/export?${exportQuery ? `${exportQuery}&` : ""}format=json`} download>
                  Export JSON
                </a>
              </div>
            </form>
            <Pager c={c} meta={meta} noun="results" />
            {results.rows.length ? (
              <ResultsTable rows={results.rows} />
            ) : (
              <p class="muted">
                {status ? (
                  <>
                    No result in this state. <a href={hrefWith(c, { "filter[status]": undefined })}>Show every state</a>
                  </>
                ) : (
                  "No device has been evaluated yet."
                )}
              </p>
            )}
          </section>
        </>
      ),
    });
  });

  // The results the page's filters select, as the API's export writes them (streamed).
  web.get("/compliance/export", requirePage("policycompliance.read"), async (c) => {
    const format = c.req.query("format") === "json" ? "json" : "csv";
    const q = pageListQuery(c, resultListSpec);
    const body = await exportResults(c.var.services.db, c.var.auth.scope, q, format);
    const date = c.var.services.clock.now().toISOString().slice(0, 10);
    return c.body(body, 200, {
      "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="policy-compliance-${date}.${format}"`,
    });
  });
}

import type { Hono } from "hono";
import { listEnvelope } from "../../http/list.ts";
import { policiesResource } from "../../modules/compliance/policies.ts";
import { listResults, resultListSpec } from "../../modules/compliance/results.ts";
import { plural } from "../../words.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { renderPage } from "../layout.tsx";
import { Pager, withoutEmptyFields, pageListQuery } from "../list-page.tsx";
import { requirePage } from "../viewer.ts";

const STATUS_WORDS: Record<string, string> = {
  compliant: "compliant",
  not_compliant: "not compliant",
  not_evaluated: "not evaluated",
  error: "error",
};

/**
 * Compliance: the policies (GET /policies) and the devices' results (GET /policy-compliance, in the caller's
 * scope), with the failing rules of each result. Editing policies is done through the API for now.
 */
export function registerCompliancePage(web: Hono<WebEnv>): void {
  web.get("/compliance", requirePage("policycompliance.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const { db } = c.var.services;
    const { scope } = c.var.auth;
    const q = pageListQuery(c, resultListSpec);
    const [policies, results] = await Promise.all([
      policiesResource.list(db, scope, { page: 1, perPage: 500, where: undefined, orderBy: [], fields: null }),
      listResults(db, scope, q),
    ]);
    const { meta } = listEnvelope(c, q, results.total, results.rows);
    return renderPage(c, 200, {
      title: "Compliance",
      session: c.var.session,
      children: (
        <>
          <section class="card" id="policies">
            <h1>Compliance</h1>
            <h2>Policies</h2>
            {policies.rows.length ? (
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th>Policy</th>
                      <th>Vendor</th>
                      <th>Rules</th>
                      <th>Assignments</th>
                    </tr>
                  </thead>
                  <tbody>
                    {policies.rows.map((p) => (
                      <tr>
                        <td>
                          <strong>{String(p.name)}</strong>
                          {p.builtin ? <span class="badge">built-in</span> : null}
                          <div class="muted">{String(p.description)}</div>
                        </td>
                        <td>{String(p.vendor)}</td>
                        <td>{plural(Number(p.rules_count), "rule")}</td>
                        <td>{plural(Number(p.assignments_count), "assignment")}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p class="muted">No policy yet.</p>
            )}
          </section>
          <section class="card" id="results">
            <h2>Results</h2>
            <Pager c={c} meta={meta} noun="results" />
            {results.rows.length ? (
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th>Device</th>
                      <th>Policy</th>
                      <th>State</th>
                      <th>Score</th>
                      <th>Failing rules</th>
                      <th>Evaluated</th>
                    </tr>
                  </thead>
                  <tbody>
                    {results.rows.map((r) => (
                      <tr>
                        <td>
                          <a href={`/devices/${r.device_id}`}>{r.device_name}</a>
                        </td>
                        <td>{r.policy_name}</td>
                        <td>
                          <span class={`badge ${r.status}`}>{STATUS_WORDS[r.status] ?? r.status}</span>
                        </td>
                        <td>{`${r.passed_rules} of ${plural(r.total_rules, "rule")}`}</td>
                        <td>
                          {r.rules
                            .filter((rule) => !rule.passed)
                            .map((rule) => (
                              <div>{rule.description || rule.method}</div>
                            ))}
                        </td>
                        <td>
                          <Time at={new Date(r.evaluated_at)} none="" />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : (
              <p class="muted">No device has been evaluated yet.</p>
            )}
          </section>
        </>
      ),
    });
  });
}

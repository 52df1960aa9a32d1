import type { Context, Hono } from "hono";
import { getResult, type ResultOut } from "../../../modules/compliance/index.ts";
import { createRemediationSnippet, RemediationInput } from "../../../modules/snippets/index.ts";
import type { WebEnv } from "../env.ts";
import { Field, fieldProblems, OtherProblems, parsedBy, readForm, text, type FieldProblems } from "../form.tsx";
import { Time } from "../format.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";
import { FailingRules, StateBadge } from "./words.tsx";

/** Whether the result has a failed rule whose fix is known: what a remediation snippet is made of. */
const fixable = (r: ResultOut) => r.rules.some((rule) => !rule.passed && rule.remediation?.length);

/** **Create remediation snippet**: the snippet's name (empty: the API's default name), then the snippet's page. */
function RemediationForm(props: { c: Context<WebEnv>; r: ResultOut; name: string; problems?: FieldProblems }) {
  const { c, r, problems: p } = props;
  return (
    <section class="card" id="remediation">
      <h2>Remediation</h2>
      <p class="muted">
        A snippet of the fix lines of every failing rule above, in rule order, for this device's template: preview it on
        the device, then deploy it.
      </p>
      <CsrfForm action={`/compliance/results/${r.id}/snippet`} csrf={c.var.session.csrfToken} class="grid-form">
        <OtherProblems problems={p} fields={["name"]} />
        <Field
          id="r-name"
          name="name"
          label="Snippet name"
          problems={p}
          hint={`Empty: Remediation: ${r.policy_name} on ${r.device_name} (result ${r.id})`}
        >
          <input type="text" id="r-name" name="name" value={props.name} autocomplete="off" />
        </Field>
        <div class="actions">
          <button type="submit">Create remediation snippet</button>
        </div>
      </CsrfForm>
    </section>
  );
}

function resultPage(
  c: Context<WebEnv>,
  status: 200 | 422,
  r: ResultOut,
  form?: { name: string; problems?: FieldProblems },
) {
  const failed = r.rules.filter((rule) => !rule.passed).length;
  const canRemediate = c.var.auth.abilities.has("snippets.write") && fixable(r);
  return renderPage(c, status, {
    title: `${r.policy_name} on ${r.device_name}`,
    session: c.var.session,
    children: (
      <>
        <section class="card">
          <p class="muted">
            <a href="/compliance#results">Compliance</a>
          </p>
          <h1>{`${r.policy_name} on ${r.device_name}`}</h1>
          <dl class="details">
            <dt>State</dt>
            <dd>
              <StateBadge status={r.status} />
            </dd>
            <dt>Device</dt>
            <dd>
              <a href={`/devices/${r.device_id}`}>{r.device_name}</a>
            </dd>
            <dt>Configuration</dt>
            <dd>
              {r.config_id ? (
                <a href={`/configs/${r.config_id}`}>{`${r.command}, version ${r.config_version}`}</a>
              ) : (
                <span class="muted">none stored</span>
              )}
            </dd>
            <dt>Rules passed</dt>
            <dd>{`${r.passed_rules} of ${r.total_rules}`}</dd>
            <dt>Evaluated</dt>
            <dd>
              <Time at={new Date(r.evaluated_at)} none="" />
            </dd>
          </dl>
          <h2>{failed ? "Failing rules" : "Every rule passed"}</h2>
          <FailingRules rules={r.rules} />
        </section>
        {canRemediate && <RemediationForm c={c} r={r} name={form?.name ?? ""} problems={form?.problems} />}
      </>
    ),
  });
}

/**
 * One device's result against one policy (GET /policy-compliance/{id}) with its failing lines and their fix, and
 * **Create remediation snippet** (POST /policy-compliance/{id}/snippet), which lands on the new snippet.
 */
export function registerComplianceResultPage(web: Hono<WebEnv>): void {
  const resultOf = (c: Context<WebEnv>) =>
    getResult(c.var.services.db, c.var.auth.scope, pathId(c.req.param("id")!, "Compliance result"));

  web.get("/compliance/results/:id", requirePage("policycompliance.read"), async (c) =>
    resultPage(c, 200, await resultOf(c)),
  );

  // The API's call needs snippets.write; the page it answers from (and shows again on a problem) policycompliance.read.
  web.post(
    "/compliance/results/:id/snippet",
    requirePage("policycompliance.read"),
    requirePage("snippets.write"),
    async (c) => {
      const form = await readForm(c);
      if (!form) return csrfRefusal(c, c.var.session);
      const r = await resultOf(c);
      const name = text(form, "name") ?? "";
      try {
        const input = parsedBy(RemediationInput, name.trim() === "" ? {} : { name });
        const snippet = await createRemediationSnippet(c.var.services, c.var.auth, r.id, input.name);
        return c.redirect(`/snippets/${snippet.id}?done=remediation`, 303);
      } catch (err) {
        const problems = fieldProblems(err);
        if (!problems) throw err;
        return resultPage(c, 422, r, { name, problems });
      }
    },
  );
}

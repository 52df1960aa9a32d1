import type { Context, Hono } from "hono";
import {
  assignmentsResource,
  changeablePolicies,
  copyPolicy,
  policiesResource,
  runAssignment,
  runPolicy,
} from "../../../modules/compliance/index.ts";
import { ApiError } from "../../../platform/http/errors.ts";
import type { WebEnv } from "../env.ts";
import {
  Field,
  fieldProblems,
  OtherProblems,
  parsedBy,
  readForm,
  text,
  type FieldProblems,
  type Form,
} from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";
import { assignmentInput, assignmentPage } from "./assignment-form.tsx";

const FIELDS = ["name", "description", "vendor", "definition"] as const;
const EXAMPLE = [
  "// Description: Telnet must be disabled on the VTY lines",
  "#[must_not_match_regex]",
  "^ transport input .*telnet",
].join("\n");

/** The definition's problems by line: the API names each one "definition: line 7: ...". */
function lineProblems(problems: FieldProblems | undefined, definition: string) {
  const lines = definition.split("\n");
  const byLine: { line: number; text: string; message: string }[] = [];
  const rest: string[] = [];
  for (const m of problems?.definition ?? []) {
    const hit = /^definition: line (\d+): (.*)$/s.exec(m);
    if (hit) byLine.push({ line: Number(hit[1]), text: lines[Number(hit[1]) - 1] ?? "", message: hit[2]! });
    else rest.push(m);
  }
  return { byLine, rest };
}

function PolicyForm(props: {
  c: Context<WebEnv>;
  action: string;
  values: Record<string, string>;
  problems?: FieldProblems;
  submit: string;
}) {
  const { values: v, problems: p } = props;
  const { byLine, rest } = lineProblems(p, v.definition ?? "");
  const fieldProblemsShown: FieldProblems = { ...p, ...(rest.length ? { definition: rest } : {}) };
  if (!rest.length) delete fieldProblemsShown.definition;
  return (
    <CsrfForm action={props.action} csrf={props.c.var.session.csrfToken} class="entity-form">
      <OtherProblems problems={p} fields={[...FIELDS]} />
      <div class="grid-form">
        <Field id="p-name" name="name" label="Name" problems={p}>
          <input type="text" id="p-name" name="name" value={v.name ?? ""} />
        </Field>
        <Field id="p-vendor" name="vendor" label="Vendor" problems={p} hint="A hint, e.g. Cisco IOS.">
          <input type="text" id="p-vendor" name="vendor" value={v.vendor ?? ""} />
        </Field>
        <Field id="p-description" name="description" label="Description" problems={p}>
          <input type="text" id="p-description" name="description" value={v.description ?? ""} />
        </Field>
      </div>
      <Field
        id="p-definition"
        name="definition"
        label="Rules"
        problems={fieldProblemsShown}
        hint="rConfig's policy format: a // Description line, a #[method] line, then the pattern lines (docs/compliance.md)."
      >
        <textarea
          id="p-definition"
          name="definition"
          class="code definition"
          rows={16}
          spellcheck={false}
          placeholder={EXAMPLE}
          aria-describedby={byLine.length ? "p-definition-lines" : undefined}
        >
          {v.definition ?? ""}
        </textarea>
        {byLine.length > 0 && (
          <ul class="line-problems" id="p-definition-lines" role="alert">
            {byLine.map((b) => (
              <li data-line={String(b.line)}>
                {`Line ${b.line}: `}
                <code>{b.text}</code>
                {` ${b.message}`}
              </li>
            ))}
          </ul>
        )}
      </Field>
      <div class="actions">
        <button type="submit">{props.submit}</button>
        <a href="/compliance">Cancel</a>
      </div>
    </CsrfForm>
  );
}

function policyPage(c: Context<WebEnv>, status: 200 | 422, title: string, props: Parameters<typeof PolicyForm>[0]) {
  return renderPage(c, status, {
    title,
    session: c.var.session,
    children: (
      <section class="card">
        <p class="muted">
          <a href="/compliance">Compliance</a>
        </p>
        <h1>{title}</h1>
        <PolicyForm {...props} />
      </section>
    ),
  });
}

const policyValues = (form: Form) => Object.fromEntries(FIELDS.map((f) => [f, text(form, f) ?? ""]));

/**
 * The compliance page's writes, through the API's resources and services: add and edit a policy (the
 * definition's problems shown on their lines), copy, delete, run; add, run and delete an assignment.
 */
export function registerComplianceForms(web: Hono<WebEnv>): void {
  const write = requirePage("policycompliance.write");

  web.get("/compliance/policies/new", write, (c) =>
    policyPage(c, 200, "Add a policy", {
      c,
      action: "/compliance/policies/new",
      values: { definition: `${EXAMPLE}\n` },
      submit: "Add policy",
    }),
  );

  web.post("/compliance/policies/new", write, async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const values = policyValues(form);
    try {
      await policiesResource.save(c.var, parsedBy(policiesResource.input, values), null, "create");
      return c.redirect("/compliance?done=policy-created", 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return policyPage(c, 422, "Add a policy", {
        c,
        action: "/compliance/policies/new",
        values,
        problems,
        submit: "Add policy",
      });
    }
  });

  const policyOf = (c: Context<WebEnv>) =>
    policiesResource.show(c.var.services.db, pathId(c.req.param("id")!, "Policy"), c.var.auth.scope);

  web.get("/compliance/policies/:id/edit", write, async (c) => {
    const policy = await policyOf(c);
    if (!(await changeablePolicies(c.var.services.db, c.var.auth.scope, [policy.id])).has(policy.id))
      throw new ApiError(
        403,
        `Policy ${policy.id} judges devices outside your scope: only a role that sees them may change it`,
      );
    const values = Object.fromEntries(FIELDS.map((f) => [f, String(policy[f] ?? "")]));
    return policyPage(c, 200, `Edit ${policy.name}`, {
      c,
      action: `/compliance/policies/${policy.id}/edit`,
      values,
      submit: "Save changes",
    });
  });

  web.post("/compliance/policies/:id/edit", write, async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const policy = await policyOf(c);
    const values = policyValues(form);
    try {
      await policiesResource.save(c.var, parsedBy(policiesResource.input, values), policy.id, "replace");
      return c.redirect("/compliance?done=policy-saved", 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return policyPage(c, 422, `Edit ${policy.name}`, {
        c,
        action: `/compliance/policies/${policy.id}/edit`,
        values,
        problems,
        submit: "Save changes",
      });
    }
  });

  web.post("/compliance/policies/:id/copy", write, async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const copy = await copyPolicy(c.var, pathId(c.req.param("id")!, "Policy"), undefined);
    return c.redirect(`/compliance/policies/${copy.id}/edit`, 303);
  });

  web.post("/compliance/policies/:id/delete", write, async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    await policiesResource.remove(c.var, [pathId(c.req.param("id")!, "Policy")], false);
    return c.redirect("/compliance?done=policy-deleted", 303);
  });

  web.post("/compliance/policies/:id/run", write, async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    await runPolicy(c.var, pathId(c.req.param("id")!, "Policy"));
    c.var.services.jobsQueued();
    return c.redirect("/compliance?done=run#results", 303);
  });

  web.post("/compliance/assignments/new", write, async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const { input, values } = assignmentInput(form);
    try {
      await assignmentsResource.save(c.var, parsedBy(assignmentsResource.input, input), null, "create");
      return c.redirect("/compliance?done=assignment-created#assignments", 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return assignmentPage(c, 422, { title: "Assign a policy", values, problems });
    }
  });

  web.post("/compliance/assignments/:id/run", write, async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    await runAssignment(c.var, pathId(c.req.param("id")!, "Policy assignment"));
    c.var.services.jobsQueued();
    return c.redirect("/compliance?done=run#results", 303);
  });

  web.post("/compliance/assignments/:id/delete", write, async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    await assignmentsResource.remove(c.var, [pathId(c.req.param("id")!, "Policy assignment")], false);
    return c.redirect("/compliance?done=assignment-deleted#assignments", 303);
  });
}

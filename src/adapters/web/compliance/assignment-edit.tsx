import type { Context, Hono } from "hono";
import { assignmentsResource, changeableAssignments } from "../../../modules/compliance/index.ts";
import { ApiError } from "../../../platform/http/errors.ts";
import type { WebEnv } from "../env.ts";
import { fieldProblems, parsedBy, readForm, text } from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";
import { assignmentInput, assignmentPage, assignmentValues } from "./assignment-form.tsx";

/**
 * Changing an assignment in place (PUT and PATCH /policy-assignments/{id}): its policy, devices, tags or
 * categories, command, enabled and run-after-backup; **Enable** / **Disable** from the list. The API's resource
 * checks it: a caller whose scope does not cover every device it reaches, before or after, is refused.
 */
export function registerAssignmentEditPages(web: Hono<WebEnv>): void {
  const write = requirePage("policycompliance.write");
  const assignmentOf = (c: Context<WebEnv>) =>
    assignmentsResource.show(c.var.services.db, pathId(c.req.param("id")!, "Policy assignment"), c.var.auth.scope);
  const titleOf = (a: Record<string, unknown>) => `Edit the assignment of ${String(a.policy_name)}`;

  web.get("/compliance/assignments/:id/edit", write, async (c) => {
    const a = await assignmentOf(c);
    if (!(await changeableAssignments(c.var.services.db, c.var.auth.scope, [a.id])).has(a.id))
      throw new ApiError(
        403,
        `Policy assignment ${a.id} judges devices outside your scope: only a role that sees them may change it`,
      );
    return assignmentPage(c, 200, {
      title: titleOf(a),
      action: `/compliance/assignments/${a.id}/edit`,
      submit: "Save changes",
      values: assignmentValues(a),
    });
  });

  web.post("/compliance/assignments/:id/edit", write, async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const a = await assignmentOf(c);
    const { input, values } = assignmentInput(form);
    try {
      await assignmentsResource.save(c.var, parsedBy(assignmentsResource.input, input), a.id, "replace");
      return c.redirect("/compliance?done=assignment-saved#assignments", 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return assignmentPage(c, 422, {
        title: titleOf(a),
        action: `/compliance/assignments/${a.id}/edit`,
        submit: "Save changes",
        values,
        problems,
      });
    }
  });

  web.post("/compliance/assignments/:id/enabled", write, async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const a = await assignmentOf(c);
    const enabled = text(form, "enabled") === "true";
    await assignmentsResource.save(c.var, parsedBy(assignmentsResource.input.partial(), { enabled }), a.id, "patch");
    return c.redirect(`/compliance?done=assignment-${enabled ? "enabled" : "disabled"}#assignments`, 303);
  });
}

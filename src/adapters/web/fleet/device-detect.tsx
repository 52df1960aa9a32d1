import type { Hono } from "hono";
import type { Job } from "../../../platform/jobs/queue.ts";
import { requestDetect } from "../../../modules/devices/index.ts";
import type { WebEnv } from "../env.ts";
import { checkedForm, csrfRefusal } from "../guard.ts";
import { CsrfForm } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";

/** The template, vendor and model a finished detection proposes (the job's `result.proposal`, as the API gives it). */
type Proposal = {
  template_id: number;
  template: string;
  vendor: string | null;
  model: string | null;
  os_version: string | null;
  matched_by: string[];
};

const proposalOf = (job: Job): Proposal | null => {
  const proposal = job.result?.proposal;
  return proposal && typeof proposal === "object" ? (proposal as Proposal) : null;
};

/**
 * What a finished connection test recognised, and, for a role with devices.write, **Apply this proposal**: the
 * detection again with `apply` (POST /devices/{id}/detect {"apply": true}), which sets the template, vendor and
 * model to what the device shows then.
 */
export function DetectProposal(props: { job: Job; canApply: boolean; csrf: string }) {
  const { job } = props;
  if (job.type !== "detect" || job.state !== "finished") return null;
  const proposal = proposalOf(job);
  // Without one, the job's message (shown above) says why: nothing recognised, or several templates fit equally.
  if (!proposal) return null;
  const fields: [string, string][] = [
    ["Template", proposal.template],
    ["Vendor", proposal.vendor ?? "not recognised"],
    ["Model", proposal.model ?? "not recognised"],
    ["OS version", proposal.os_version ?? "not recognised"],
    ["Recognised by", proposal.matched_by.join(", ")],
  ];
  return (
    <div id="detect-proposal">
      <h2>What the connection test recognised</h2>
      <dl class="details">
        {fields.map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </>
        ))}
      </dl>
      {job.result?.applied === true ? (
        <p class="alert success" role="status">
          Applied: the device now has this template, vendor and model.
        </p>
      ) : (
        props.canApply && (
          <div class="actions">
            <CsrfForm action={`/devices/${job.deviceId}/detect-apply`} csrf={props.csrf} class="inline">
              <button type="submit">Apply this proposal</button>
            </CsrfForm>
            <span class="muted">
              connects again and sets the template, vendor and model to what the device shows then
            </span>
          </div>
        )
      )}
    </div>
  );
}

export function registerDeviceDetectRoutes(web: Hono<WebEnv>): void {
  web.post("/devices/:id/detect-apply", requirePage("devices.write"), async (c) => {
    if (!(await checkedForm(c, c.var.session.csrfToken))) return csrfRefusal(c, c.var.session);
    const id = pathId(c.req.param("id"), "Device");
    const job = await requestDetect(c.var.services.db, c.var.auth, id, true, c.var.services.clock.now());
    if (job.state === "queued") c.var.services.jobsQueued();
    return c.redirect(`/devices/${id}?job=${job.id}`, 303);
  });
}

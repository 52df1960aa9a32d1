import type { Context, Hono } from "hono";
import { credentialsResource } from "../../../modules/credentials/index.ts";
import {
  adoptAll,
  adoptOne,
  candidateListSpec,
  createPreset,
  deletePreset,
  DiscoverInput,
  ignoreOne,
  listCandidates,
  listPresets,
  refuseScoped,
  requestDiscovery,
  runPreset,
  ScanPresetInput,
} from "../../../modules/discovery/index.ts";
import { getVisibleJob } from "../../../modules/jobs/index.ts";
import { templatesResource } from "../../../modules/templates/index.ts";
import { listEnvelope } from "../../../platform/http/list.ts";
import { choices } from "../choices.ts";
import type { WebEnv } from "../env.ts";
import { fieldProblems, ids, parsedBy, readForm, text, type FieldProblems, type Form } from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { hrefWith, Pager, pageListQuery, withoutEmptyFields } from "../list-page.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";
import { CandidateTable, DiscoverForm, PresetForm, PresetTable, type Values } from "./parts.tsx";

const DONE: Record<string, string> = {
  adopted: "Candidate adopted: the device is made and its backup queued.",
  "adopted-all": "Every pending candidate that could be was adopted; their backups are queued.",
  ignored: "Candidate ignored: later scans leave it ignored.",
  "preset-created": "Scan preset added.",
  "preset-deleted": "Scan preset deleted.",
};

const STATES = ["pending", "adopted", "ignored"] as const;

/** Ports as typed ("22, 23 2222"): numbers, or the text itself so the API's schema names what is wrong. */
const portsOf = (raw: string) =>
  raw
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((p) => (/^\d{1,6}$/.test(p) ? Number(p) : p));
/** One target a line (commas also separate). */
const targetsOf = (raw: string) =>
  raw
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

function valuesFrom(form: Form, names: string[]): Values {
  const v: Values = { credential_ids: ids(form, "credential_ids").map(String) };
  for (const n of names) v[n] = text(form, n) ?? "";
  return v;
}

const number = (raw: string | undefined) =>
  raw?.trim() ? (/^\d{1,9}$/.test(raw.trim()) ? Number(raw) : raw) : undefined;

type FormState = { values: Values; problems?: FieldProblems };

/**
 * Discovery (docs/discovery.md) through its module's services, with the API's rules: a scan of addresses, the
 * candidates it found (adopt, ignore, adopt all) and the scan presets. Like the API, only for a role that sees
 * every device; the forms need devices.write.
 */
export function registerDiscoveryPage(web: Hono<WebEnv>): void {
  const page = async (
    c: Context<WebEnv>,
    status: 200 | 422,
    forms: { discover?: FormState; preset?: FormState } = {},
  ) => {
    refuseScoped(c.var.auth);
    const { db } = c.var.services;
    const q = pageListQuery(c, candidateListSpec);
    const { total, rows } = await listCandidates(db, q);
    const { meta } = listEnvelope(c, q, total, rows);
    const [presets, sets, templates] = await Promise.all([
      listPresets(db),
      choices(c, credentialsResource, "credentials.read", "cred_name"),
      choices(c, templatesResource, "templates.read", "name"),
    ]);
    const canWrite = c.var.auth.abilities.has("devices.write");
    const canSchedule = c.var.auth.abilities.has("tasks.write");
    const jobId = Number(c.req.query("job"));
    const job =
      Number.isSafeInteger(jobId) && jobId > 0
        ? await getVisibleJob(db, c.var.auth.scope, c.var.auth.userId, jobId).catch(() => null)
        : null;
    const done = DONE[c.req.query("done") ?? ""];
    const state = c.req.query("filter[state]");
    const csrf = c.var.session.csrfToken;
    return renderPage(c, status, {
      title: "Discovery",
      session: c.var.session,
      children: (
        <>
          <section class="card">
            <h1>Discovery</h1>
            {done && (
              <p class="alert success" role="status">
                {done}
              </p>
            )}
            {job && (
              <p
                id="scan-progress"
                class={`alert ${job.state !== "finished" ? "warning" : job.outcome === "success" ? "success" : "error"}`}
                role="status"
                data-poll={job.state === "finished" ? undefined : `/jobs/${job.id}/status`}
                data-done={`/discovery?job=${job.id}`}
                data-what="Scan"
              >
                {job.state === "finished"
                  ? `Scan ${job.id} finished: ${job.outcome}${job.message ? ` (${job.message})` : ""}`
                  : `Scan ${job.id} ${job.state}: what it finds appears below once a collector has run it.`}
                {job.state !== "finished" && (
                  <>
                    {" "}
                    <a href={`/discovery?job=${job.id}`}>Refresh</a>
                  </>
                )}
              </p>
            )}
            <p class="muted">
              Give addresses, ranges or subnets: each address that answers on a port is logged in to with the credential
              sets marked for discovery and recognised by a template. What is found waits here to be adopted, or becomes
              a device at once with “Adopt what is found”.
            </p>
            {canWrite && (
              <DiscoverForm csrf={csrf} sets={sets} {...(forms.discover ?? { values: { ports: "22, 23" } })} />
            )}
          </section>
          <section class="card" id="candidates">
            <h2>Found</h2>
            <nav class="filters" aria-label="Candidates by state">
              <a href={hrefWith(c, { "filter[state]": undefined })} aria-current={!state ? "page" : undefined}>
                All
              </a>
              {STATES.map((s) => (
                <a href={hrefWith(c, { "filter[state]": s })} aria-current={state === s ? "page" : undefined}>
                  {s[0]!.toUpperCase() + s.slice(1)}
                </a>
              ))}
            </nav>
            {canWrite && rows.some((r) => r.state === "pending" && !r.problem) && (
              <CsrfForm action="/discovery/candidates/adopt" csrf={csrf} class="actions">
                <button type="submit">Adopt all</button>
              </CsrfForm>
            )}
            <Pager c={c} meta={meta} noun="candidates" />
            {rows.length ? (
              <CandidateTable rows={rows} sets={sets} templates={templates} canWrite={canWrite} csrf={csrf} />
            ) : (
              <p class="muted">Nothing found yet.</p>
            )}
          </section>
          <section class="card" id="presets">
            <h2>Scan presets</h2>
            <p class="muted">
              Named subnets and ranges scanned again on a schedule (a task of type discovery_scan), so new devices
              appear here by themselves. A scan connects only to the addresses its preset names.
            </p>
            <PresetTable presets={presets} canWrite={canWrite} canSchedule={canSchedule} csrf={csrf} />
            {canWrite && (
              <PresetForm
                csrf={csrf}
                sets={sets}
                {...(forms.preset ?? {
                  values: { ports: "22, 23", connects_per_second: "50", max_connects: "20000" },
                })}
              />
            )}
          </section>
        </>
      ),
    });
  };

  web.get("/discovery", requirePage("devices.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    return page(c, 200);
  });

  web.post("/discovery", requirePage("devices.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const values = valuesFrom(form, ["addresses", "ports", "adopt"]);
    const { db, clock } = c.var.services;
    try {
      const input = parsedBy(DiscoverInput, {
        addresses: targetsOf(values.addresses as string),
        ports: portsOf(values.ports as string),
        adopt: values.adopt === "true",
        ...(values.credential_ids!.length ? { credential_ids: (values.credential_ids as string[]).map(Number) } : {}),
      });
      const job = await requestDiscovery(db, c.var.auth, input, clock.now());
      c.var.services.jobsQueued();
      return c.redirect(`/discovery?job=${job.id}`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return page(c, 422, { discover: { values, problems } });
    }
  });

  web.post("/discovery/candidates/adopt", requirePage("devices.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const adopted = await adoptAll(c.var.services.db, c.var.auth, c.var.services.clock.now());
    if (adopted.length) c.var.services.jobsQueued();
    return c.redirect("/discovery?done=adopted-all", 303);
  });

  web.post("/discovery/candidates/:id/:action{adopt|ignore}", requirePage("devices.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const id = pathId(c.req.param("id"), "Candidate");
    const { db, clock } = c.var.services;
    if (c.req.param("action") === "adopt") {
      await adoptOne(db, c.var.auth, id, clock.now());
      c.var.services.jobsQueued();
      return c.redirect("/discovery?done=adopted", 303);
    }
    await ignoreOne(db, c.var.auth, id, clock.now());
    return c.redirect("/discovery?done=ignored", 303);
  });

  web.post("/discovery/presets", requirePage("devices.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const values = valuesFrom(form, ["name", "targets", "ports", "adopt", "connects_per_second", "max_connects"]);
    try {
      const input = parsedBy(ScanPresetInput, {
        name: values.name,
        targets: targetsOf(values.targets as string),
        ports: portsOf(values.ports as string),
        adopt: values.adopt === "true",
        credential_ids: (values.credential_ids as string[]).map(Number),
        connects_per_second: number(values.connects_per_second as string),
        max_connects: number(values.max_connects as string),
      });
      await createPreset(c.var.services.db, c.var.auth, input, c.var.services.clock.now());
      return c.redirect("/discovery?done=preset-created#presets", 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return page(c, 422, { preset: { values, problems } });
    }
  });

  web.post("/discovery/presets/:id/:action{delete|run}", requirePage("devices.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const id = pathId(c.req.param("id"), "Scan preset");
    const { db, clock } = c.var.services;
    if (c.req.param("action") === "delete") {
      await deletePreset(db, c.var.auth, id, clock.now());
      return c.redirect("/discovery?done=preset-deleted#presets", 303);
    }
    const job = await runPreset(db, c.var.auth, id, clock.now());
    c.var.services.jobsQueued();
    return c.redirect(`/discovery?job=${job.id}`, 303);
  });
}

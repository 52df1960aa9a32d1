import type { Context, Hono } from "hono";
import {
  changeRetentionPolicy,
  configExportSpec,
  exportArchive,
  getRetentionPolicy,
  isLatestVersion,
  purgeConfigs,
  setRetentionPolicyRoute,
  type PurgeReport,
  type RetentionPolicy,
} from "../../../modules/configs/index.ts";
import { plural } from "../../../kernel/words.ts";
import { parseListQuery } from "../../../platform/http/list.ts";
import type { WebEnv } from "../env.ts";
import { Field, fieldProblems, OtherProblems, parsedBy, readForm, text, type FieldProblems } from "../form.tsx";
import { formatBytes, Time } from "../format.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { requirePage } from "../viewer.ts";

/** The body PUT /configs/retention-policy takes: the page's form is checked by the same schema. */
const PolicyInput = setRetentionPolicyRoute.request.body.content["application/json"].schema;
/** Versions the purge confirmation lists (the count says how many go in all). */
const LISTED = 50;
/** Filters of the export form: GET /configs/export's list filters. */
const EXPORT_FILTERS: [string, string, string][] = [
  ["device_tags", "Tag", "Devices carrying this tag (any case)"],
  ["device_vendor", "Vendor", "The devices' vendor (any case)"],
  ["device_name", "Device name", "One device, by its exact name (any case)"],
  ["command", "Command", "Exact command, e.g. show running-config"],
];

type PolicyValues = { keep_days: string; keep_versions: string };

const valuesOf = (p: RetentionPolicy): PolicyValues => ({
  keep_days: p.keepDays === null ? "" : String(p.keepDays),
  keep_versions: p.keepVersions === null ? "" : String(p.keepVersions),
});

/** A field as the API's body: empty is null (no limit), a number is a number, anything else is left for the schema to refuse. */
const limitOf = (raw: string) => (raw.trim() === "" ? null : /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw);

function describePolicy(p: RetentionPolicy): string {
  if (p.keepDays === null && p.keepVersions === null)
    return "No limit is set: every version is kept, and a purge deletes none.";
  const rules = [
    p.keepDays === null
      ? "No age limit"
      : `Versions a download last saw more than ${plural(p.keepDays, "day")} ago may go`,
    p.keepVersions === null
      ? "no count limit"
      : p.keepVersions === 1
        ? "only the newest version of each device and command is kept"
        : `the newest ${p.keepVersions} versions of each device and command are kept`,
    "the latest version is always kept",
  ];
  return `${rules.join("; ")}.`;
}

/** What a purge deletes (or deleted), counted. */
function PurgeCounts(props: { report: PurgeReport }) {
  const r = props.report;
  const devices = new Set(r.configs.map((v) => v.deviceId)).size;
  return (
    <ul id="purge-counts">
      <li>{`${plural(r.configs.length, "configuration version")} of ${plural(devices, "device")}`}</li>
      <li>{plural(r.changes, "change record")}</li>
      <li>{`${plural(r.blobs, "stored text")} no remaining version uses (${formatBytes(r.blobBytes)})`}</li>
      <li>{plural(r.failedJobIds.length, "failed download record")}</li>
    </ul>
  );
}

async function retentionPage(c: Context<WebEnv>, status: 200 | 422, values?: PolicyValues, problems?: FieldProblems) {
  const { db } = c.var.services;
  const { abilities, scope } = c.var.auth;
  const policy = await getRetentionPolicy(db);
  const write = abilities.has("configs.write");
  const v = values ?? valuesOf(policy);
  const p = problems ?? {};
  return renderPage(c, status, {
    title: "Configuration retention",
    session: c.var.session,
    children: (
      <>
        <section class="card" id="retention-policy">
          <h1>Configuration retention</h1>
          <p>{describePolicy(policy)}</p>
          <p class="muted">
            {"Changed "}
            <Time at={policy.updatedAt} none="never" />. The nightly purge task applies it to every device.
          </p>
          {write && scope.all && (
            <CsrfForm action="/configs/retention" csrf={c.var.session.csrfToken} class="grid-form entity-form">
              <OtherProblems problems={p} fields={["keep_days", "keep_versions"]} />
              <Field
                id="r-keep_days"
                name="keep_days"
                label="Keep days"
                problems={p}
                hint="Versions last seen more than this many days ago may go; empty: no age limit."
              >
                <input type="text" inputmode="numeric" id="r-keep_days" name="keep_days" value={v.keep_days} />
              </Field>
              <Field
                id="r-keep_versions"
                name="keep_versions"
                label="Keep versions"
                problems={p}
                hint="The newest this many versions of each device and command stay; empty: no count limit."
              >
                <input
                  type="text"
                  inputmode="numeric"
                  id="r-keep_versions"
                  name="keep_versions"
                  value={v.keep_versions}
                />
              </Field>
              <div class="actions">
                <button type="submit">Save the policy</button>
              </div>
            </CsrfForm>
          )}
          {write && !scope.all && (
            <p class="muted">
              The retention policy applies to every device; changing it needs a role that sees all devices.
            </p>
          )}
        </section>
        {write && (
          <section class="card" id="purge">
            <h2>Purge old versions</h2>
            <p>
              {scope.all
                ? "Deletes now what the policy no longer keeps, instead of waiting for the nightly purge task."
                : "Deletes now what the policy no longer keeps of the devices you see."}{" "}
              The next page counts what goes, and asks first.
            </p>
            <div class="actions">
              <a class="button danger" href="/configs/purge">
                Purge…
              </a>
            </div>
          </section>
        )}
        <section class="card" id="export">
          <h2>Export</h2>
          <p>
            The latest version of every device and command you see, one file per device and command, as a .tar.gz. Fill
            a filter to export fewer.
          </p>
          <form method="get" action="/configs/export" class="grid-form entity-form">
            {EXPORT_FILTERS.map(([name, label, hint]) => (
              <Field id={`x-${name}`} name={`filter[${name}]`} label={label} hint={hint}>
                <input type="text" id={`x-${name}`} name={`filter[${name}]`} />
              </Field>
            ))}
            <div class="actions">
              <button type="submit">Export the configurations</button>
            </div>
          </form>
        </section>
      </>
    ),
  });
}

function purgeConfirmPage(c: Context<WebEnv>, plan: PurgeReport, changed?: string) {
  const count = plan.configs.length;
  return renderPage(c, changed ? 409 : 200, {
    title: "Purge old versions",
    session: c.var.session,
    children: (
      <section class="card">
        <p class="muted">
          <a href="/configs/retention">Configuration retention</a>
        </p>
        <h1>{`Purge ${plural(count, "configuration version")}?`}</h1>
        {changed && (
          <p class="alert error" role="alert">
            {changed}
          </p>
        )}
        <p>{describePolicy(plan.policy)} This deletes:</p>
        <PurgeCounts report={plan} />
        <p>This cannot be undone.</p>
        {count > 0 && (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Device</th>
                  <th>Command</th>
                  <th>Version</th>
                  <th>Last seen</th>
                </tr>
              </thead>
              <tbody>
                {plan.configs.slice(0, LISTED).map((v) => (
                  <tr>
                    <td>{v.deviceName}</td>
                    <td>{v.command}</td>
                    <td>
                      <a href={`/configs/${v.id}`}>{`v${v.version}`}</a>
                    </td>
                    <td>
                      <Time at={v.lastSeenAt} none="" />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {count > LISTED && <p class="muted">{`The first ${LISTED} of ${count} are listed.`}</p>}
        {count > 0 || plan.failedJobIds.length > 0 || plan.blobs > 0 ? (
          <CsrfForm action="/configs/purge" csrf={c.var.session.csrfToken}>
            <input type="hidden" name="expected" value={String(count)} />
            <div class="actions">
              <button type="submit" class="danger">
                {`Purge ${plural(count, "version")}`}
              </button>
              <a href="/configs/retention">Cancel</a>
            </div>
          </CsrfForm>
        ) : (
          <p class="muted">Nothing to purge.</p>
        )}
      </section>
    ),
  });
}

/**
 * Configuration retention: the policy (GET and PUT /configs/retention-policy), the purge of what it no longer keeps
 * in the caller's scope (POST /configs/purge: its dry run is the confirmation), and the export of the latest
 * versions (GET /configs/export). Changing the policy needs a role that sees every device, as in the API.
 */
export function registerRetentionPages(web: Hono<WebEnv>): void {
  web.get("/configs/retention", requirePage("configs.read"), (c) => retentionPage(c, 200));

  web.post("/configs/retention", requirePage("configs.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const values = { keep_days: text(form, "keep_days") ?? "", keep_versions: text(form, "keep_versions") ?? "" };
    try {
      const body = parsedBy(PolicyInput, {
        keep_days: limitOf(values.keep_days),
        keep_versions: limitOf(values.keep_versions),
      });
      await changeRetentionPolicy(
        c.var.services.db,
        c.var.auth,
        { keepDays: body.keep_days ?? null, keepVersions: body.keep_versions ?? null },
        c.var.services.clock.now(),
      );
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return retentionPage(c, 422, values, problems);
    }
    return c.redirect("/configs/retention", 303);
  });

  web.get("/configs/purge", requirePage("configs.write"), async (c) => {
    const { db, clock } = c.var.services;
    return purgeConfirmPage(c, await purgeConfigs(db, clock.now(), { dryRun: true, scope: c.var.auth.scope }));
  });

  web.post("/configs/purge", requirePage("configs.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const { db, clock } = c.var.services;
    const scope = c.var.auth.scope;
    // What was confirmed is what goes: a backup or a policy change in between shows the new count first.
    const plan = await purgeConfigs(db, clock.now(), { dryRun: true, scope });
    if (String(plan.configs.length) !== text(form, "expected"))
      return purgeConfirmPage(
        c,
        plan,
        `The count changed since the page was shown: now ${plural(plan.configs.length, "version")} go. Confirm again.`,
      );
    const report = await purgeConfigs(db, clock.now(), { dryRun: false, scope, actor: c.var.auth });
    return renderPage(c, 200, {
      title: "Purged",
      session: c.var.session,
      children: (
        <section class="card">
          <p class="muted">
            <a href="/configs/retention">Configuration retention</a>
          </p>
          <h1>Purged</h1>
          <p class="alert success" role="status">
            Deleted:
          </p>
          <PurgeCounts report={report} />
        </section>
      ),
    });
  });

  // The latest versions the filters select, as GET /configs/export writes them. An empty filter field means no
  // filter: dropped (the API would refuse it), so the form needs no script.
  web.get("/configs/export", requirePage("configs.read"), async (c) => {
    const url = new URL(c.req.url);
    const empty = [...url.searchParams].filter(([, value]) => value.trim() === "").map(([name]) => name);
    if (empty.length) {
      for (const name of empty) url.searchParams.delete(name);
      return c.redirect(`${url.pathname}${url.search}`, 302);
    }
    const q = parseListQuery(c, configExportSpec, [isLatestVersion]);
    const body = await exportArchive(c.var.services.db, c.var.auth.scope, q);
    const date = c.var.services.clock.now().toISOString().slice(0, 10);
    return c.body(body, 200, {
      "Content-Type": "application/gzip",
      "Content-Disposition": `attachment; filename="configs-${date}.tar.gz"`,
      "Cache-Control": "no-store",
    });
  });
}

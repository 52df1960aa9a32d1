import type { Context, Hono } from "hono";
import { ApiError } from "../../../platform/http/errors.ts";
import { parseCsvTable } from "../../../modules/devices/index.ts";
import { MAX_IMPORT_BYTES, MAX_IMPORT_ROWS, planCsvImport } from "../../../modules/devices/index.ts";
import { applyImport, type ImportReport } from "../../../modules/devices/index.ts";
import { deviceChoices } from "../choices.ts";
import type { WebEnv } from "../env.ts";
import { readForm, text } from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { requirePage } from "../viewer.ts";
import { writeContextOf } from "./device-form.tsx";

const cell = (v: string) => `"${v.replace(/"/g, '""')}"`;

/**
 * A pasted address list as the import's CSV: one device per line, "address" or "name address", each with the
 * vendor, template and credential set chosen once for all (a name defaults to the address).
 */
export function addressListCsv(list: string, common: Record<string, string>): string {
  const shared = Object.entries(common).filter(([, v]) => v !== "");
  const lines = list
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => l.split(/\s+/));
  const header = ["device_name", "device_ip", ...shared.map(([k]) => k)].join(",");
  return (
    [
      header,
      ...lines.map((parts) => {
        const [name, ip] = parts.length > 1 ? [parts[0]!, parts.slice(1).join(" ")] : [parts[0]!, parts[0]!];
        return [name, ip, ...shared.map(([, v]) => v)].map(cell).join(",");
      }),
    ].join("\n") + "\n"
  );
}

function ImportPage(props: {
  c: Context<WebEnv>;
  status: 200 | 422;
  csv: string;
  list: string;
  common?: Record<string, string>;
  report?: ImportReport;
  dryRun?: boolean;
  problem?: string;
  choices: Awaited<ReturnType<typeof deviceChoices>>;
}) {
  const { c, report, choices } = props;
  const kept = props.common ?? {};
  const csrf = c.var.session.csrfToken;
  const Select = (s: { name: string; label: string; options: [number, string][] | null; byName?: boolean }) =>
    s.options && (
      <div class="field">
        <label for={`i-${s.name}`}>{s.label}</label>
        <select id={`i-${s.name}`} name={s.name}>
          <option value="">None</option>
          {s.options.map(([id, name]) => {
            const value = s.byName ? name : String(id);
            return (
              <option value={value} selected={kept[s.name] === value}>
                {name}
              </option>
            );
          })}
        </select>
      </div>
    );
  return renderPage(c, props.status, {
    title: "Import devices",
    session: c.var.session,
    children: (
      <>
        {(report || props.problem) && (
          <section class="card" id="import-report">
            <h2>{props.dryRun ? "Check only: nothing was changed" : "Imported"}</h2>
            {props.problem && (
              <p class="alert error" role="alert">
                {props.problem}
              </p>
            )}
            {report && (
              <p id="import-counts">
                {props.dryRun
                  ? `${report.created} to create, ${report.updated} to update, ${report.rejected} rejected`
                  : `${report.created} created, ${report.updated} updated, ${report.rejected} rejected`}
              </p>
            )}
            {report && report.rows.length > 0 && (
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th>Line</th>
                      <th>Device</th>
                      <th>What happens</th>
                      <th>Why not</th>
                    </tr>
                  </thead>
                  <tbody>
                    {report.rows.map((r) => (
                      <tr>
                        <td>{r.row}</td>
                        <td>{r.device_name}</td>
                        <td>{r.action}</td>
                        <td>
                          {Object.values(r.errors ?? {})
                            .flat()
                            .join("; ")}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
        )}
        <section class="card">
          <p class="muted">
            <a href="/devices">Devices</a>
          </p>
          <h1>Import devices</h1>
          <h2>A list of addresses</h2>
          <CsrfForm action="/devices/import" csrf={csrf} class="grid-form entity-form">
            <div class="field">
              <label for="i-list">One device a line: an address, or a name and an address</label>
              <textarea id="i-list" name="list" rows={6} class="code">
                {props.list}
              </textarea>
            </div>
            {choices.vendors ? (
              <Select name="device_vendor" label="Vendor" options={choices.vendors} byName />
            ) : (
              <div class="field">
                <label for="i-device_vendor">Vendor</label>
                <input type="text" id="i-device_vendor" name="device_vendor" value={kept.device_vendor ?? ""} />
              </div>
            )}
            <Select name="device_template_id" label="Connection template" options={choices.templates} />
            <Select name="device_cred_id" label="Credential set" options={choices.credentials} />
            <div class="field">
              <label for="i-device_tags">Tags (separated by |)</label>
              <input type="text" id="i-device_tags" name="device_tags" value={kept.device_tags ?? ""} />
            </div>
            <div class="actions">
              <button type="submit" name="dry_run" value="true" class="secondary">
                Check
              </button>
              <button type="submit">Import</button>
            </div>
          </CsrfForm>
          <h2>A CSV file's text</h2>
          <p class="muted">{`As the export writes it: a header line naming the columns (device_name, device_ip, device_vendor, device_tags joined with |, ...); a device whose name exists in your scope is updated. At most ${MAX_IMPORT_ROWS} rows.`}</p>
          <CsrfForm action="/devices/import" csrf={csrf}>
            <label for="i-csv">CSV</label>
            <textarea id="i-csv" name="csv" rows={8} class="code">
              {props.csv}
            </textarea>
            <div class="actions">
              <button type="submit" name="dry_run" value="true" class="secondary">
                Check
              </button>
              <button type="submit">Import</button>
            </div>
          </CsrfForm>
        </section>
      </>
    ),
  });
}

/** Importing devices from pasted CSV or an address list, through the import API's own planner and writer. */
export function registerDeviceImportPage(web: Hono<WebEnv>): void {
  web.get("/devices/import", requirePage("devices.write"), async (c) =>
    ImportPage({ c, status: 200, csv: "", list: "", choices: await deviceChoices(c) }),
  );

  web.post("/devices/import", requirePage("devices.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const choices = await deviceChoices(c);
    const list = text(form, "list") ?? "";
    const csv = text(form, "csv") ?? "";
    const dryRun = text(form, "dry_run") === "true";
    const common = Object.fromEntries(
      ["device_vendor", "device_template_id", "device_cred_id", "device_tags"].map((k) => [k, text(form, k) ?? ""]),
    );
    const source = list.trim() ? addressListCsv(list, common) : csv;
    try {
      if (!source.trim()) throw ApiError.validation({ csv: ["Paste a list of addresses or a CSV text first"] });
      if (Buffer.byteLength(source) > MAX_IMPORT_BYTES)
        throw ApiError.validation({ csv: [`The text is over ${MAX_IMPORT_BYTES / 1024 / 1024} MB`] });
      const table = parseCsvTable(source, MAX_IMPORT_ROWS);
      const ctx = writeContextOf(c);
      const report = await applyImport(ctx, await planCsvImport(ctx.db, ctx.scope, table), { dryRun });
      return ImportPage({ c, status: 200, csv, list, common, report, dryRun, choices });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      return ImportPage({ c, status: 422, csv, list, common, dryRun, choices, problem: err.message });
    }
  });
}

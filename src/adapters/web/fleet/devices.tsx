import type { Context, Hono } from "hono";
import { listEnvelope } from "../../../platform/http/list.ts";
import { deviceFilterChoices, deviceListSpec, exportStream, listDevices } from "../../../modules/devices/index.ts";
import type { DeviceOut } from "../../../modules/devices/index.ts";
import type { WebEnv } from "../env.ts";
import { Time } from "../format.tsx";
import { CsrfForm, renderPage } from "../layout.tsx";
import { hrefWith, Pager, SortHeading, withoutEmptyFields, pageListQuery } from "../list-page.tsx";
import { requirePage } from "../viewer.ts";
import { BULK_DONE, registerBulkDeviceActions } from "./device-bulk.tsx";

const DEFAULT_PER_PAGE = 50;

export function DeviceStatus(props: { device: Pick<DeviceOut, "enabled" | "status"> }) {
  if (!props.device.enabled) return <span class="badge disabled">disabled</span>;
  return <span class={`badge status-${props.device.status}`}>{props.device.status}</span>;
}

/**
 * The filter form: its field names are the API's query parameters, so the page's address is an API query too.
 * Tags, categories and vendors are offered as lists only to a role that may list them through the API; others
 * type a tag or vendor name.
 */
async function FilterForm(props: { c: Context<WebEnv> }) {
  const { c } = props;
  const choices = await deviceFilterChoices(c.var.services.db, c.var.auth.abilities);
  const q = (name: string) => c.req.query(name) ?? "";
  const Choice = (p: { id: string; name: string; label: string; options: [string, string][] | null }) => (
    <div class="field">
      <label for={p.id}>{p.label}</label>
      {p.options ? (
        <select id={p.id} name={p.name}>
          <option value="">Any</option>
          {p.options.map(([value, label]) => (
            <option value={value} selected={q(p.name) === value}>
              {label}
            </option>
          ))}
        </select>
      ) : (
        <input type="search" id={p.id} name={p.name} value={q(p.name)} />
      )}
    </div>
  );
  return (
    <form method="get" action="/devices" class="filters" role="search">
      <div class="field grow">
        <label for="device-search">Search</label>
        <input
          type="search"
          id="device-search"
          name="search"
          value={q("search")}
          placeholder="Name, address, model, vendor or tag"
        />
      </div>
      <Choice
        id="filter-tag"
        name="filter[device_tags]"
        label="Tag"
        options={choices.tags && choices.tags.map((t) => [t, t])}
      />
      {choices.categories && (
        <Choice
          id="filter-category"
          name="filter[device_category_id]"
          label="Category"
          options={choices.categories.map((r) => [String(r.id), r.name])}
        />
      )}
      <Choice
        id="filter-vendor"
        name="filter[device_vendor]"
        label="Vendor"
        options={choices.vendors && choices.vendors.map((v) => [v, v])}
      />
      <Choice id="filter-status" name="filter[status]" label="Status" options={choices.statuses.map((s) => [s, s])} />
      {c.req.query("sort") && <input type="hidden" name="sort" value={c.req.query("sort")} />}
      <div class="field">
        <button type="submit">Apply</button>
      </div>
    </form>
  );
}

/** The export of what the page shows: its filters, search and sort, every page. */
function exportHref(c: Context<WebEnv>, format: "csv" | "json"): string {
  const query = hrefWith(c, { page: undefined, per_page: undefined, ...bulkDoneCleared(), format }).split("?")[1];
  return `/devices/export?${query}`;
}

const bulkDoneCleared = () => Object.fromEntries(Object.keys(BULK_DONE).map((k) => [k, undefined]));

/**
 * Devices: the API's device list (same filters, sort, search and scope) as a table, with bulk enable/disable for
 * roles with devices.write.
 */
export function registerDevicesPage(web: Hono<WebEnv>): void {
  // The devices the page's filters, search and sort select, every page of them, as GET /devices/export writes
  // them (CSV, or JSON with ?format=json): read whole by the API's own export, in the caller's scope.
  web.get("/devices/export", requirePage("devices.read"), async (c) => {
    const format = c.req.query("format") === "json" ? "json" : "csv";
    const q = pageListQuery(c, deviceListSpec);
    const body = await exportStream(c.var.services.db, c.var.auth.scope, q, format);
    const date = c.var.services.clock.now().toISOString().slice(0, 10);
    return c.body(body, 200, {
      "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="devices-${date}.${format}"`,
    });
  });

  web.get("/devices", requirePage("devices.read"), async (c) => {
    const clean = withoutEmptyFields(c);
    if (clean) return c.redirect(clean, 302);
    const { db } = c.var.services;
    const q = pageListQuery(c, deviceListSpec);
    if (!c.req.query("per_page") && !c.req.query("perPage")) q.perPage = DEFAULT_PER_PAGE;
    const { total, rows } = await listDevices(db, c.var.auth.scope, q);
    const { meta } = listEnvelope(c, q, total, rows);
    const sort = c.req.query("sort") ?? deviceListSpec.defaultSort;
    const canWrite = c.var.auth.abilities.has("devices.write");
    const canDownload = c.var.auth.abilities.has("configs.read");
    const session = c.var.session;
    const back = hrefWith(c, {
      page: c.req.query("page"),
      ...Object.fromEntries(Object.keys(BULK_DONE).map((k) => [k, undefined])),
    });
    // Only a count comes back in the address, so a crafted link cannot put words on the page.
    const updated = Object.entries(BULK_DONE)
      .flatMap(([k, words]) => (/^\d+$/.test(c.req.query(k) ?? "") ? [words(Number(c.req.query(k)))] : []))
      .join(" ");
    const headings: [string, string][] = [
      ["device_name", "Name"],
      ["device_ip", "Address"],
      ["device_vendor", "Vendor"],
      ["device_model", "Model"],
      ["status", "Status"],
      ["last_backup_at", "Last backup"],
    ];
    const table = (
      <div class="table-wrap">
        <table class="devices">
          <thead>
            <tr>
              {canWrite && (
                <th>
                  <span class="visually-hidden">Select</span>
                </th>
              )}
              {headings.map(([field, label]) => (
                <SortHeading c={c} field={field} label={label} current={sort} />
              ))}
              <th>Tags</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((d) => (
              <tr>
                {canWrite && (
                  <td>
                    <input type="checkbox" name="ids" value={String(d.id)} aria-label={`Select ${d.device_name}`} />
                  </td>
                )}
                <td>
                  <a href={`/devices/${d.id}`}>{d.device_name}</a>
                </td>
                <td class="mono">{d.device_ip}</td>
                <td>{d.device_vendor ?? ""}</td>
                <td>{d.device_model ?? ""}</td>
                <td>
                  <DeviceStatus device={d} />
                </td>
                <td>
                  <Time at={d.last_backup_at ? new Date(d.last_backup_at) : null} none="never" />
                </td>
                <td>{d.device_tags.join(", ")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
    return renderPage(c, 200, {
      title: "Devices",
      session,
      children: (
        <section class="card">
          <h1>Devices</h1>
          {canWrite && (
            <p class="actions">
              <a class="button" href="/devices/new">
                Add a device
              </a>
              <a class="button secondary" href="/devices/import">
                Import devices
              </a>
            </p>
          )}
          {updated && (
            <p class="alert success" role="status">
              {updated}
            </p>
          )}
          {await FilterForm({ c })}
          <p class="actions">
            <a class="button secondary" href={exportHref(c, "csv")} download>
              Export CSV
            </a>
            <a class="button secondary" href={exportHref(c, "json")} download>
              Export JSON
            </a>
          </p>
          <Pager c={c} meta={meta} noun="devices" />
          {canWrite ? (
            <CsrfForm action="/devices/bulk" csrf={session.csrfToken}>
              <input type="hidden" name="back" value={back} />
              {table}
              <div class="actions">
                <span class="muted">Selected:</span>
                <button type="submit" name="action" value="edit" class="secondary">
                  Edit selected
                </button>
                {canDownload && (
                  <button type="submit" name="action" value="download" class="secondary">
                    Download now
                  </button>
                )}
                <button type="submit" name="action" value="test" class="secondary">
                  Test connection
                </button>
                <button type="submit" name="action" value="host_key" class="secondary">
                  Accept new host keys
                </button>
                <button type="submit" name="action" value="enable" class="secondary">
                  Enable selected
                </button>
                <button type="submit" name="action" value="disable" class="danger">
                  Disable selected
                </button>
                <button type="submit" name="action" value="delete" class="danger">
                  Delete selected
                </button>
              </div>
            </CsrfForm>
          ) : (
            table
          )}
        </section>
      ),
    });
  });

  registerBulkDeviceActions(web);
}

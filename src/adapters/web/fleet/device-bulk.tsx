import type { Context, Hono } from "hono";
import { ApiError } from "../../../platform/http/errors.ts";
import { requestDetect } from "../../../modules/devices/index.ts";
import { resetHostKey } from "../../../modules/devices/index.ts";
import { BulkUpdate, type DeviceOut } from "../../../modules/devices/index.ts";
import { deleteDevices, getDevice, setDevicesEnabled, updateDevices } from "../../../modules/devices/index.ts";
import { requestDownloadNow } from "../../../modules/jobs/index.ts";
import { plural } from "../../../kernel/words.ts";
import { deviceChoices, type DeviceChoices } from "../choices.ts";
import type { WebEnv } from "../env.ts";
import { Field, ids, OtherProblems, parsedBy, readForm, text, type FieldProblems, type Form } from "../form.tsx";
import { csrfRefusal, safeNext } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { requirePage } from "../viewer.ts";
import { writeContextOf } from "./device-form.tsx";

/** The API's own bulk limit. */
const MAX_BULK = 1000;

/** What the list says after a bulk action: a count per key, so an address can only bring these words. */
export const BULK_DONE: Record<string, (n: number) => string> = {
  enabled: (n) => `Enabled ${plural(n, "device")}.`,
  disabled: (n) => `Disabled ${plural(n, "device")}.`,
  edited: (n) => `Changed ${plural(n, "device")}.`,
  deleted: (n) => `Deleted ${plural(n, "device")}.`,
  downloads: (n) => `Queued a download of ${plural(n, "device")}.`,
  tests: (n) => `Queued a connection test of ${plural(n, "device")}; each device's page shows the outcome.`,
  host_keys: (n) =>
    `Forgot the pinned host key of ${plural(n, "device")}: the next connection pins the key each presents.`,
  skipped: (n) => `${plural(n, "disabled device")} skipped.`,
};

/** The selected ids: at least one, at most the API's bulk limit, each a device id (as the bulk API checks). */
function selected(form: Form): number[] {
  const raw = ([] as unknown[]).concat(form.ids ?? []);
  const list = ids(form, "ids");
  if (raw.length === 0) throw ApiError.validation({ ids: ["Select at least one device"] });
  if (raw.length > MAX_BULK) throw ApiError.validation({ ids: [`Select at most ${MAX_BULK} devices at a time`] });
  if (list.length !== raw.length) throw ApiError.validation({ ids: ["ids must be device ids"] });
  return [...new Set(list)];
}

/** Every selected device, as the caller may see it: one outside the scope is a 404, before anything is done. */
const devicesOf = (c: Context<WebEnv>, list: number[]) =>
  Promise.all(list.map((id) => getDevice(c.var.services.db, c.var.auth.scope, id)));

function backTo(form: Form, counts: Record<string, number>): string {
  const url = new URL(safeNext(text(form, "back")) ?? "/devices", "http://x");
  for (const k of Object.keys(BULK_DONE)) url.searchParams.delete(k);
  for (const [k, n] of Object.entries(counts)) if (n) url.searchParams.set(k, String(n));
  return url.pathname + url.search;
}

const KEEP = "keep";

function BulkEditPage(props: {
  c: Context<WebEnv>;
  devices: DeviceOut[];
  back: string;
  choices: DeviceChoices;
  problems?: FieldProblems;
  values?: Record<string, string>;
}) {
  const { c, devices, choices, problems: p, values: v = {} } = props;
  const Choice = (s: { name: string; label: string; options: [number, string][]; none: string; noneValue: string }) => (
    <Field id={`b-${s.name}`} name={s.name} label={s.label} problems={p}>
      <select id={`b-${s.name}`} name={s.name}>
        <option value={KEEP}>Leave unchanged</option>
        <option value={s.noneValue} selected={v[s.name] === s.noneValue}>
          {s.none}
        </option>
        {s.options.map(([id, name]) => (
          <option value={String(id)} selected={v[s.name] === String(id)}>
            {name}
          </option>
        ))}
      </select>
    </Field>
  );
  return renderPage(c, p ? 422 : 200, {
    title: "Edit devices",
    session: c.var.session,
    children: (
      <section class="card">
        <p class="muted">
          <a href={props.back}>Devices</a>
        </p>
        <h1>{`Edit ${plural(devices.length, "device")}`}</h1>
        <p class="muted">{devices.map((d) => d.device_name).join(", ")}</p>
        <CsrfForm action="/devices/bulk/edit" csrf={c.var.session.csrfToken} class="grid-form entity-form">
          <OtherProblems
            problems={p}
            fields={["device_tags", "device_category_id", "device_cred_id", "device_template_id"]}
          />
          <input type="hidden" name="back" value={props.back} />
          {devices.map((d) => (
            <input type="hidden" name="ids" value={String(d.id)} />
          ))}
          <Field id="b-device_tags" name="device_tags" label="Tags (comma-separated)" problems={p}>
            <select id="b-tags-mode" name="tags_mode" aria-label="What to do with the tags">
              <option value={KEEP}>Leave unchanged</option>
              <option value="add" selected={v.tags_mode === "add"}>
                Add these tags
              </option>
              <option value="replace" selected={v.tags_mode === "replace"}>
                Replace the tags with these
              </option>
            </select>
            <input type="text" id="b-device_tags" name="device_tags" value={v.device_tags ?? ""} />
          </Field>
          {choices.categories && (
            <Choice
              name="device_category_id"
              label="Category"
              options={choices.categories}
              none="No category"
              noneValue=""
            />
          )}
          {choices.credentials && (
            <Choice
              name="device_cred_id"
              label="Credential set"
              options={choices.credentials}
              none="Each device's own login"
              noneValue="0"
            />
          )}
          {choices.templates && (
            <Choice
              name="device_template_id"
              label="Connection template"
              options={choices.templates}
              none="No template"
              noneValue=""
            />
          )}
          <div class="actions">
            <button type="submit">{`Save ${plural(devices.length, "device")}`}</button>
            <a href={props.back}>Cancel</a>
          </div>
        </CsrfForm>
      </section>
    ),
  });
}

/**
 * The device list's actions on a selection: the bulk API's all-or-nothing writes (enable, disable, edit,
 * delete), and per device what the API does one at a time (download now, test connection, accept host keys),
 * after checking every selected device is one the caller may see.
 */
export function registerBulkDeviceActions(web: Hono<WebEnv>): void {
  web.post("/devices/bulk", requirePage("devices.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const action = text(form, "action");
    const list = selected(form);
    const { db, clock } = c.var.services;
    const now = clock.now();
    const back = backTo(form, {});
    switch (action) {
      case "enable":
      case "disable": {
        const done = await setDevicesEnabled(writeContextOf(c), list, action === "enable", true);
        return c.redirect(backTo(form, { [`${action}d`]: done.length }), 303);
      }
      case "edit":
        return BulkEditPage({ c, devices: await devicesOf(c, list), back, choices: await deviceChoices(c) });
      case "delete": {
        const devices = await devicesOf(c, list);
        return renderPage(c, 200, {
          title: "Delete devices",
          session: c.var.session,
          children: (
            <section class="card">
              <h1>{`Delete ${plural(devices.length, "device")}?`}</h1>
              <p>{devices.map((d) => d.device_name).join(", ")}</p>
              <p>Their tag links and stored configurations are deleted too. This cannot be undone.</p>
              <CsrfForm action="/devices/bulk/delete" csrf={c.var.session.csrfToken}>
                <input type="hidden" name="back" value={back} />
                {devices.map((d) => (
                  <input type="hidden" name="ids" value={String(d.id)} />
                ))}
                <div class="actions">
                  <button type="submit" class="danger">{`Delete ${plural(devices.length, "device")}`}</button>
                  <a href={back}>Cancel</a>
                </div>
              </CsrfForm>
            </section>
          ),
        });
      }
      case "download":
      case "test": {
        if (action === "download" && !c.var.auth.abilities.has("configs.read"))
          throw new ApiError(403, "Download now needs the configs.read ability");
        const devices = await devicesOf(c, list);
        let queued = 0;
        for (const d of devices) {
          if (!d.enabled) continue;
          if (action === "download") await requestDownloadNow(db, c.var.auth.scope, c.var.auth, d.id, now);
          else await requestDetect(db, c.var.auth, d.id, false, now);
          queued++;
        }
        if (queued) c.var.services.jobsQueued();
        return c.redirect(
          backTo(form, { [action === "download" ? "downloads" : "tests"]: queued, skipped: devices.length - queued }),
          303,
        );
      }
      case "host_key": {
        await devicesOf(c, list);
        for (const id of list) await resetHostKey(db, c.var.auth, id, null, now);
        return c.redirect(backTo(form, { host_keys: list.length }), 303);
      }
      default:
        throw ApiError.validation({
          action: ["action must be one of: edit, download, test, host_key, enable, disable, delete"],
        });
    }
  });

  web.post("/devices/bulk/delete", requirePage("devices.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const n = await deleteDevices(writeContextOf(c), selected(form), true);
    return c.redirect(backTo(form, { deleted: n }), 303);
  });

  web.post("/devices/bulk/edit", requirePage("devices.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const list = selected(form);
    const devices = await devicesOf(c, list);
    const choices = await deviceChoices(c);
    const values = Object.fromEntries(
      ["tags_mode", "device_tags", "device_category_id", "device_cred_id", "device_template_id"].map((k) => [
        k,
        text(form, k) ?? KEEP,
      ]),
    );
    const tags = (values.device_tags === KEEP ? "" : values.device_tags!)
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const ref = (name: string, none: number | null) => {
      const v = values[name];
      if (v === KEEP || v === undefined) return undefined;
      return v === "" || v === "0" ? none : /^\d+$/.test(v) ? Number(v) : v;
    };
    const change: Record<string, unknown> = {};
    if (choices.categories && ref("device_category_id", null) !== undefined)
      change.device_category_id = ref("device_category_id", null);
    if (choices.credentials && ref("device_cred_id", 0) !== undefined) change.device_cred_id = ref("device_cred_id", 0);
    if (choices.templates && ref("device_template_id", null) !== undefined)
      change.device_template_id = ref("device_template_id", null);
    const items = devices.map((d) => ({
      id: d.id,
      ...change,
      ...(values.tags_mode === "replace"
        ? { device_tags: tags }
        : values.tags_mode === "add"
          ? { device_tags: [...d.device_tags, ...tags] }
          : {}),
    }));
    try {
      if (!Object.keys(items[0]!).some((k) => k !== "id"))
        throw ApiError.validation({ body: ["Choose at least one change: every field says Leave unchanged"] });
      await updateDevices(writeContextOf(c), parsedBy(BulkUpdate, { devices: items }).devices, false, true);
      return c.redirect(backTo(form, { edited: items.length }), 303);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 422) throw err;
      // `devices.3.device_tags ...` goes next to the tags field, naming the device.
      const problems: FieldProblems = {};
      for (const [key, messages] of Object.entries(err.errors ?? {})) {
        const m = /^devices\.(\d+)\.([a-z_]+)/.exec(key);
        const field = m ? m[2]! : key;
        for (const message of messages) {
          const said = m ? `${devices[Number(m[1])]?.device_name}: ${message.slice(key.length + 1)}` : message;
          (problems[field] ??= []).push(said);
        }
      }
      return BulkEditPage({ c, devices, back: safeNext(text(form, "back")) ?? "/devices", choices, problems, values });
    }
  });
}

import type { Context, Hono } from "hono";
import { DeviceInput, DevicePatch, type DeviceOut } from "../../../modules/devices/index.ts";
import {
  createDevices,
  deleteDevices,
  getDevice,
  setDevicesEnabled,
  updateDevices,
  type WriteContext,
} from "../../../modules/devices/index.ts";
import { resetHostKey } from "../../../modules/devices/index.ts";
import { requestDetect } from "../../../modules/devices/index.ts";
import { deviceChoices, type DeviceChoices } from "../choices.ts";
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

/** What the form's fields hold, as typed (a refused form comes back with them). */
type Values = Record<string, string>;

export const writeContextOf = (c: Context<WebEnv>): WriteContext => ({
  db: c.var.services.db,
  secrets: c.var.services.secrets,
  actor: c.var.auth,
  scope: c.var.auth.scope,
  abilities: c.var.auth.abilities,
  now: c.var.services.clock.now(),
});

function valuesOf(d: DeviceOut, clone: boolean): Values {
  return {
    device_name: clone ? "" : d.device_name,
    device_ip: clone ? "" : d.device_ip,
    device_vendor: d.device_vendor ?? "",
    device_model: d.device_model,
    device_category_id: d.device_category_id ? String(d.device_category_id) : "",
    device_template_id: d.device_template_id ? String(d.device_template_id) : "",
    device_cred_id: String(d.device_cred_id),
    device_port_override: d.device_port_override ? String(d.device_port_override) : "",
    device_tags: d.device_tags.join(", "),
    device_username: d.device_username,
    zone_id: String(d.zone_id),
    notes: d.notes,
    enabled: d.enabled ? "true" : "",
  };
}

const FIELDS = [
  "device_name",
  "device_ip",
  "device_vendor",
  "device_model",
  "device_category_id",
  "device_template_id",
  "device_cred_id",
  "device_port_override",
  "device_tags",
  "device_username",
  "zone_id",
  "device_password",
  "device_enable_password",
  "notes",
  "enabled",
] as const;

/** A number as typed, or the text itself so the API's schema names what is wrong with it. */
const numberOr = (raw: string) => (/^\d{1,15}$/.test(raw.trim()) ? Number(raw.trim()) : raw);

/**
 * The form's text as the API's device body: empty selects clear (0 for the credential set: the device's own
 * login), tags are comma-separated, a password left empty is kept and "clear" removes it. Lists the role may not
 * read are not on the form, so they are left out and keep what the device has.
 */
export function inputOf(form: Form, choices: DeviceChoices): { input: Record<string, unknown>; values: Values } {
  const values: Values = {};
  for (const f of FIELDS) values[f] = text(form, f) ?? "";
  const input: Record<string, unknown> = {
    device_name: values.device_name!.trim(),
    device_ip: values.device_ip!.trim(),
    device_model: values.device_model!.trim(),
    device_port_override: values.device_port_override!.trim() ? numberOr(values.device_port_override!) : null,
    device_tags: values
      .device_tags!.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    device_username: values.device_username!.trim(),
    notes: values.notes,
    enabled: values.enabled === "true",
  };
  input.device_vendor = values.device_vendor!.trim() || null;
  if (choices.categories)
    input.device_category_id = values.device_category_id ? numberOr(values.device_category_id) : null;
  if (choices.templates)
    input.device_template_id = values.device_template_id ? numberOr(values.device_template_id) : null;
  // Empty: a new device goes to the local zone, an edited one stays where it is.
  if (choices.zones && values.zone_id) input.zone_id = numberOr(values.zone_id);
  if (choices.credentials) input.device_cred_id = values.device_cred_id ? numberOr(values.device_cred_id) : 0;
  for (const secret of ["device_password", "device_enable_password"] as const) {
    if (values[secret]) input[secret] = values[secret];
    else if (text(form, `clear_${secret}`) === "true") input[secret] = null;
  }
  delete values.device_password;
  delete values.device_enable_password;
  return { input, values };
}

function Select(props: {
  id: string;
  name: string;
  value: string;
  options: [number, string][];
  none: string;
  noneValue?: string;
}) {
  return (
    <select id={props.id} name={props.name} aria-describedby={`${props.id}-error`}>
      <option value={props.noneValue ?? ""}>{props.none}</option>
      {props.options.map(([id, label]) => (
        <option value={String(id)} selected={props.value === String(id)}>
          {label}
        </option>
      ))}
    </select>
  );
}

/** The add / edit / clone form; `device` is the one being edited (for its stored-secret state). */
function DeviceForm(props: {
  c: Context<WebEnv>;
  action: string;
  values: Values;
  choices: DeviceChoices;
  problems?: FieldProblems;
  device?: DeviceOut;
  submit: string;
}) {
  const { values: v, choices, problems: p } = props;
  const input = (name: string, extra: Record<string, unknown> = {}) => (
    <input
      type="text"
      id={`f-${name}`}
      name={name}
      value={v[name] ?? ""}
      aria-describedby={`f-${name}-error`}
      {...extra}
    />
  );
  const Secret = (s: { name: "device_password" | "device_enable_password"; label: string; has?: boolean }) => (
    <Field
      id={`f-${s.name}`}
      name={s.name}
      label={s.label}
      problems={p}
      hint={
        props.device
          ? s.has
            ? "Stored (never shown). Leave empty to keep it."
            : "None stored."
          : "Write-only: never shown again."
      }
    >
      <input type="password" id={`f-${s.name}`} name={s.name} autocomplete="new-password" />
      {props.device && s.has && (
        <label class="check">
          <input type="checkbox" name={`clear_${s.name}`} value="true" /> Clear the stored one
        </label>
      )}
    </Field>
  );
  return (
    <CsrfForm action={props.action} csrf={props.c.var.session.csrfToken} class="grid-form device-form">
      <OtherProblems problems={p} fields={[...FIELDS]} />
      <Field
        id="f-device_name"
        name="device_name"
        label="Name"
        problems={p}
        hint="At least 5 characters, no spaces; unique."
      >
        {input("device_name", { required: true })}
      </Field>
      <Field id="f-device_ip" name="device_ip" label="Address" problems={p} hint="IPv4, IPv6 or host name.">
        {input("device_ip", { required: true })}
      </Field>
      <Field id="f-device_vendor" name="device_vendor" label="Vendor" problems={p}>
        {choices.vendors ? (
          <select id="f-device_vendor" name="device_vendor">
            <option value="">Choose a vendor</option>
            {choices.vendors.map(([, name]) => (
              <option value={name} selected={v.device_vendor?.toLowerCase() === name.toLowerCase()}>
                {name}
              </option>
            ))}
          </select>
        ) : (
          input("device_vendor")
        )}
      </Field>
      <Field id="f-device_model" name="device_model" label="Model" problems={p}>
        {input("device_model")}
      </Field>
      {choices.templates && (
        <Field
          id="f-device_template_id"
          name="device_template_id"
          label="Connection template"
          problems={p}
          hint="How the collector logs in and what it runs. Left empty, a vendor with one built-in template gets it."
        >
          <Select
            id="f-device_template_id"
            name="device_template_id"
            value={v.device_template_id ?? ""}
            options={choices.templates}
            none="None"
          />
        </Field>
      )}
      {choices.credentials && (
        <Field
          id="f-device_cred_id"
          name="device_cred_id"
          label="Credential set"
          problems={p}
          hint="Or the device's own username and password below."
        >
          <Select
            id="f-device_cred_id"
            name="device_cred_id"
            value={v.device_cred_id ?? "0"}
            options={choices.credentials}
            none="The device's own login (below)"
            noneValue="0"
          />
        </Field>
      )}
      {choices.zones && (
        <Field
          id="f-zone_id"
          name="zone_id"
          label="Zone"
          problems={p}
          hint="Where the device is reached from: a remote zone's devices are polled only by its site collectors."
        >
          <Select
            id="f-zone_id"
            name="zone_id"
            value={v.zone_id ?? ""}
            options={choices.zones}
            none="local (default)"
          />
        </Field>
      )}
      {choices.categories && (
        <Field id="f-device_category_id" name="device_category_id" label="Category (command group)" problems={p}>
          <Select
            id="f-device_category_id"
            name="device_category_id"
            value={v.device_category_id ?? ""}
            options={choices.categories}
            none="None"
          />
        </Field>
      )}
      <Field
        id="f-device_port_override"
        name="device_port_override"
        label="Port"
        problems={p}
        hint="Empty: the template's port."
      >
        {input("device_port_override", { inputmode: "numeric" })}
      </Field>
      <Field
        id="f-device_tags"
        name="device_tags"
        label="Tags"
        problems={p}
        hint="Comma-separated; new names are created."
      >
        {input("device_tags")}
      </Field>
      <Field id="f-device_username" name="device_username" label="Own username" problems={p}>
        {input("device_username", { autocomplete: "off" })}
      </Field>
      <Secret name="device_password" label="Own password" has={props.device?.has_password} />
      <Secret name="device_enable_password" label="Own enable password" has={props.device?.has_enable_password} />
      <Field id="f-notes" name="notes" label="Notes" problems={p}>
        <textarea id="f-notes" name="notes" rows={3}>
          {v.notes ?? ""}
        </textarea>
      </Field>
      <div class="field">
        <label class="check">
          <input type="checkbox" name="enabled" value="true" checked={v.enabled === "true"} /> Enabled (backups include
          it)
        </label>
      </div>
      <div class="actions">
        <button type="submit">{props.submit}</button>
        <a href={props.device ? `/devices/${props.device.id}` : "/devices"}>Cancel</a>
      </div>
    </CsrfForm>
  );
}

async function formPage(
  c: Context<WebEnv>,
  status: 200 | 422,
  title: string,
  props: Omit<Parameters<typeof DeviceForm>[0], "c" | "choices"> & { choices?: DeviceChoices },
) {
  const choices = props.choices ?? (await deviceChoices(c));
  return renderPage(c, status, {
    title,
    session: c.var.session,
    children: (
      <section class="card">
        <p class="muted">
          <a href="/devices">Devices</a>
        </p>
        <h1>{title}</h1>
        <DeviceForm c={c} {...props} choices={choices} />
      </section>
    ),
  });
}

/** Only these words come back through an address, so a crafted link cannot put others on the page. */
export const DEVICE_DONE: Record<string, string> = {
  created: "Device added.",
  saved: "Changes saved.",
  enabled: "Device enabled.",
  disabled: "Device disabled: backups skip it.",
  host_key: "The pinned host key is forgotten: the next connection pins the key the device presents.",
};

/**
 * Add, edit, clone, delete, enable/disable one device, accept its new SSH host key and test its connection: the
 * API's device services with the user's role, so the same rules, scope and activity log entries.
 */
export function registerDeviceFormPages(web: Hono<WebEnv>): void {
  web.get("/devices/new", requirePage("devices.write"), async (c) => {
    const cloneOf = c.req.query("clone");
    const source = cloneOf ? await getDevice(c.var.services.db, c.var.auth.scope, pathId(cloneOf, "Device")) : null;
    const values = source ? valuesOf(source, true) : { enabled: "true", device_cred_id: "0" };
    return formPage(c, 200, source ? `Clone ${source.device_name}` : "Add a device", {
      action: "/devices/new",
      values,
      submit: "Add device",
    });
  });

  web.post("/devices/new", requirePage("devices.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const choices = await deviceChoices(c);
    const { input, values } = inputOf(form, choices);
    try {
      const [device] = await createDevices(writeContextOf(c), [parsedBy(DeviceInput, input)], false);
      return c.redirect(`/devices/${device!.id}?done=created`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, "Add a device", {
        action: "/devices/new",
        values,
        choices,
        problems,
        submit: "Add device",
      });
    }
  });

  web.get("/devices/:id/edit", requirePage("devices.write"), async (c) => {
    const device = await getDevice(c.var.services.db, c.var.auth.scope, pathId(c.req.param("id"), "Device"));
    return formPage(c, 200, `Edit ${device.device_name}`, {
      action: `/devices/${device.id}/edit`,
      values: valuesOf(device, false),
      device,
      submit: "Save changes",
    });
  });

  web.post("/devices/:id/edit", requirePage("devices.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const device = await getDevice(c.var.services.db, c.var.auth.scope, pathId(c.req.param("id"), "Device"));
    const choices = await deviceChoices(c);
    const { input, values } = inputOf(form, choices);
    try {
      await updateDevices(
        writeContextOf(c),
        [{ ...(parsedBy(DevicePatch, input) as object), id: device.id }],
        false,
        false,
      );
      return c.redirect(`/devices/${device.id}?done=saved`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, `Edit ${device.device_name}`, {
        action: `/devices/${device.id}/edit`,
        values,
        choices,
        problems,
        device,
        submit: "Save changes",
      });
    }
  });

  web.get("/devices/:id/delete", requirePage("devices.write"), async (c) => {
    const device = await getDevice(c.var.services.db, c.var.auth.scope, pathId(c.req.param("id"), "Device"));
    return renderPage(c, 200, {
      title: `Delete ${device.device_name}`,
      session: c.var.session,
      children: (
        <section class="card">
          <h1>{`Delete ${device.device_name}?`}</h1>
          <p>
            The device, its tag links and its stored configurations are deleted. This cannot be undone; disabling it
            instead keeps its history.
          </p>
          <CsrfForm action={`/devices/${device.id}/delete`} csrf={c.var.session.csrfToken}>
            <div class="actions">
              <button type="submit" class="danger">
                Delete the device
              </button>
              <a href={`/devices/${device.id}`}>Cancel</a>
            </div>
          </CsrfForm>
        </section>
      ),
    });
  });

  web.post("/devices/:id/delete", requirePage("devices.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    await deleteDevices(writeContextOf(c), [pathId(c.req.param("id"), "Device")], false);
    return c.redirect("/devices?deleted=1", 303);
  });

  web.post("/devices/:id/:action{enable|disable}", requirePage("devices.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const id = pathId(c.req.param("id"), "Device");
    const enable = c.req.param("action") === "enable";
    await setDevicesEnabled(writeContextOf(c), [id], enable, false);
    return c.redirect(`/devices/${id}?done=${enable ? "enabled" : "disabled"}`, 303);
  });

  web.post("/devices/:id/host-key", requirePage("devices.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const id = pathId(c.req.param("id"), "Device");
    await resetHostKey(c.var.services.db, c.var.auth, id, null, c.var.services.clock.now());
    return c.redirect(`/devices/${id}?done=host_key`, 303);
  });

  web.post("/devices/:id/test", requirePage("devices.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const id = pathId(c.req.param("id"), "Device");
    const job = await requestDetect(c.var.services.db, c.var.auth, id, false, c.var.services.clock.now());
    if (job.state === "queued") c.var.services.jobsQueued();
    return c.redirect(`/devices/${id}?job=${job.id}`, 303);
  });
}

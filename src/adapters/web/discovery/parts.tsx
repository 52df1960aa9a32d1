import type { listCandidates, listPresets } from "../../../modules/discovery/index.ts";
import { Field, OtherProblems, type FieldProblems } from "../form.tsx";
import { Time } from "../format.tsx";
import { CsrfForm } from "../layout.tsx";

/** A form's fields as typed (the credential sets ticked as a list), so a refused form comes back with them. */
export type Values = Record<string, string | string[]>;
type Candidate = Awaited<ReturnType<typeof listCandidates>>["rows"][number];
type Preset = Awaited<ReturnType<typeof listPresets>>[number];
type Choices = [number, string][] | null;

const str = (v: Values, name: string) => (typeof v[name] === "string" ? (v[name] as string) : "");

/** The credential sets to try, in id order unless some are picked; only for a role that may list them. */
function SetPicker(props: { id: string; sets: Choices; values: Values; problems?: FieldProblems }) {
  if (!props.sets) return null;
  const picked = (props.values.credential_ids as string[] | undefined) ?? [];
  return (
    <Field
      id={props.id}
      name="credential_ids"
      label="Credential sets"
      problems={props.problems}
      hint="None picked: every set marked for discovery. Ctrl/Cmd-click picks several."
    >
      <select id={props.id} name="credential_ids" multiple size={Math.min(5, Math.max(2, props.sets.length))}>
        {props.sets.map(([id, name]) => (
          <option value={String(id)} selected={picked.includes(String(id))}>
            {name}
          </option>
        ))}
      </select>
    </Field>
  );
}

function TargetsAndPorts(props: {
  prefix: string;
  name: string;
  label: string;
  values: Values;
  problems?: FieldProblems;
}) {
  const { prefix, values: v, problems: p } = props;
  return (
    <>
      <Field
        id={`${prefix}-${props.name}`}
        name={props.name}
        label={props.label}
        problems={p}
        hint="One a line: 192.0.2.10, 192.0.2.10-192.0.2.40, 198.51.100.0/24 (at most a /20) or a host name."
      >
        <textarea
          id={`${prefix}-${props.name}`}
          name={props.name}
          rows={3}
          class="mono"
          aria-describedby={`${prefix}-${props.name}-error`}
        >
          {str(v, props.name)}
        </textarea>
      </Field>
      <Field
        id={`${prefix}-ports`}
        name="ports"
        label="Ports"
        problems={p}
        hint="Probed on each address; a port answering SSH is SSH, any other Telnet."
      >
        <input
          type="text"
          id={`${prefix}-ports`}
          name="ports"
          value={str(v, "ports")}
          aria-describedby={`${prefix}-ports-error`}
        />
      </Field>
    </>
  );
}

export function DiscoverForm(props: { csrf: string; sets: Choices; values: Values; problems?: FieldProblems }) {
  const { values: v, problems: p } = props;
  return (
    <>
      <h2>Discover addresses</h2>
      <CsrfForm action="/discovery" csrf={props.csrf} class="grid-form entity-form">
        <OtherProblems problems={p} fields={["addresses", "ports", "adopt", "credential_ids"]} />
        <TargetsAndPorts prefix="d" name="addresses" label="Addresses" values={v} problems={p} />
        <SetPicker id="d-credential_ids" sets={props.sets} values={v} problems={p} />
        <div class="field">
          <label class="check">
            <input type="checkbox" name="adopt" value="true" checked={v.adopt === "true"} /> Adopt what is found (make
            devices and back them up)
          </label>
        </div>
        <div class="actions">
          <button type="submit">Discover</button>
        </div>
      </CsrfForm>
    </>
  );
}

export function PresetForm(props: { csrf: string; sets: Choices; values: Values; problems?: FieldProblems }) {
  const { values: v, problems: p } = props;
  const Num = (s: { name: string; label: string; hint: string }) => (
    <Field id={`p-${s.name}`} name={s.name} label={s.label} problems={p} hint={s.hint}>
      <input type="text" id={`p-${s.name}`} name={s.name} value={str(v, s.name)} inputmode="numeric" />
    </Field>
  );
  const fields = ["name", "targets", "ports", "adopt", "credential_ids", "connects_per_second", "max_connects"];
  return (
    <>
      <h3>Add a scan preset</h3>
      <CsrfForm action="/discovery/presets" csrf={props.csrf} class="grid-form entity-form">
        <OtherProblems problems={p} fields={fields} />
        <Field id="p-name" name="name" label="Name" problems={p}>
          <input type="text" id="p-name" name="name" value={str(v, "name")} aria-describedby="p-name-error" />
        </Field>
        <TargetsAndPorts prefix="p" name="targets" label="Subnets and ranges" values={v} problems={p} />
        <SetPicker id="p-credential_ids" sets={props.sets} values={v} problems={p} />
        <Num name="connects_per_second" label="Connections a second" hint="1-1000; default 50." />
        <Num name="max_connects" label="Connections per scan at most" hint="Probes and logins; default 20000." />
        <div class="field">
          <label class="check">
            <input type="checkbox" name="adopt" value="true" checked={v.adopt === "true"} /> Adopt what is found
          </label>
        </div>
        <div class="actions">
          <button type="submit">Add scan preset</button>
        </div>
      </CsrfForm>
    </>
  );
}

const nameIn = (list: Choices, id: number | null) =>
  id === null ? null : (list?.find(([i]) => i === id)?.[1] ?? `#${id}`);
const orNone = (value: string | null) => value || <span class="muted">-</span>;

export function CandidateTable(props: {
  rows: Candidate[];
  sets: Choices;
  templates: Choices;
  canWrite: boolean;
  csrf: string;
}) {
  return (
    <div class="table-wrap">
      <table id="candidate-list">
        <thead>
          <tr>
            <th>Address</th>
            <th>Port</th>
            <th>Credential set</th>
            <th>Template</th>
            <th>Vendor</th>
            <th>Model</th>
            <th>OS version</th>
            <th>Serial</th>
            <th>Host name</th>
            <th>State</th>
            <th>Found</th>
            {props.canWrite && (
              <th>
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((r) => (
            <tr data-id={String(r.id)}>
              <td class="mono">{r.address}</td>
              <td>{`${r.port} (${r.protocol})`}</td>
              <td>{orNone(nameIn(props.sets, r.credential_id))}</td>
              <td>{orNone(nameIn(props.templates, r.template_id))}</td>
              <td>{orNone(r.vendor)}</td>
              <td>{orNone(r.model)}</td>
              <td>{orNone(r.os_version)}</td>
              <td>{orNone(r.serial)}</td>
              <td class="hostname">{orNone(r.hostname)}</td>
              <td>
                <span class={`badge ${r.state === "adopted" ? "ok" : r.state === "pending" ? "warning" : ""}`}>
                  {r.state}
                </span>
                {r.state === "adopted" && r.device_id && (
                  <div>
                    <a href={`/devices/${r.device_id}`}>device</a>
                  </div>
                )}
                {r.problem && r.state === "pending" && <div class="muted">{r.problem}</div>}
              </td>
              <td>
                <Time at={new Date(r.found_at)} none="" />
              </td>
              {props.canWrite && (
                <td>
                  {r.state !== "adopted" && !r.problem && (
                    <CsrfForm action={`/discovery/candidates/${r.id}/adopt`} csrf={props.csrf} class="inline">
                      <button type="submit">Adopt</button>
                    </CsrfForm>
                  )}{" "}
                  {r.state === "pending" && (
                    <CsrfForm action={`/discovery/candidates/${r.id}/ignore`} csrf={props.csrf} class="inline">
                      <button type="submit" class="secondary">
                        Ignore
                      </button>
                    </CsrfForm>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function PresetTable(props: { presets: Preset[]; canWrite: boolean; canSchedule: boolean; csrf: string }) {
  if (!props.presets.length) return <p class="muted">No scan preset yet.</p>;
  return (
    <div class="table-wrap">
      <table id="preset-list">
        <thead>
          <tr>
            <th>Name</th>
            <th>Subnets and ranges</th>
            <th>Ports</th>
            <th>Adopts</th>
            <th>Bounds</th>
            {props.canWrite && (
              <th>
                <span class="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {props.presets.map((p) => (
            <tr data-id={String(p.id)}>
              <td>
                <strong>{p.name}</strong>
              </td>
              <td class="mono">{p.targets.join(", ")}</td>
              <td>{p.ports.join(", ")}</td>
              <td>{p.adopt ? "yes" : "no"}</td>
              <td>{`${p.connectsPerSecond}/s, ${p.maxConnects} in all`}</td>
              {props.canWrite && (
                <td>
                  <CsrfForm action={`/discovery/presets/${p.id}/run`} csrf={props.csrf} class="inline">
                    <button type="submit">Run now</button>
                  </CsrfForm>{" "}
                  {props.canSchedule && (
                    <a class="button secondary" href={`/tasks/new?task_type=discovery_scan&scan_preset_id=${p.id}`}>
                      Schedule
                    </a>
                  )}{" "}
                  <CsrfForm
                    action={`/discovery/presets/${p.id}/delete`}
                    csrf={props.csrf}
                    class="inline"
                    confirm={`Delete the scan preset ${p.name}? Tasks that run it must be deleted first.`}
                  >
                    <button type="submit" class="danger">
                      Delete
                    </button>
                  </CsrfForm>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

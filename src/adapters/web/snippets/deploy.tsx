import type { Context, Hono } from "hono";
import { deploySnippet, type dryRunAnswer } from "../../../modules/snippets/index.ts";
import { snippetsResource } from "../../../modules/snippets/index.ts";
import { CONFIRM_ABOVE, DeployInput } from "../../../modules/snippets/index.ts";
import { plural } from "../../../kernel/words.ts";
import { deployActorOf } from "./deploy-actor.ts";
import { targetChoices, type TargetChoices } from "../choices.ts";
import type { WebEnv } from "../env.ts";
import {
  Field,
  fieldProblems,
  OtherProblems,
  parsedBy,
  readForm,
  text,
  ids,
  type FieldProblems,
  type Form,
} from "../form.tsx";
import { Time } from "../format.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";

type Snippet = Awaited<ReturnType<typeof snippetsResource.show>>;
type Values = Record<string, string | string[]>;

/** Variables the deploy form asks for: the device's own fields (device_*) come from each device. */
const askedVariables = (s: Snippet) => (s.variables as string[]).filter((v) => !v.startsWith("device_"));

const FIELDS = [
  "devices",
  "tags",
  "categories",
  "dynamic_vars",
  "canary",
  "stop_on_failure",
  "concurrency",
  "confirm_device_count",
];

/** The form as the deploy API's body (a variable left empty is left out: the device's attribute of that name counts). */
function deployBody(form: Form, s: Snippet, dryRun: boolean) {
  const number = (name: string) => {
    const v = (text(form, name) ?? "").trim();
    return v === "" ? undefined : /^\d+$/.test(v) ? Number(v) : Number.NaN;
  };
  const deviceText = text(form, "devices") ?? "";
  const vars = Object.fromEntries(
    askedVariables(s)
      .map((name) => [name, text(form, `var_${name}`) ?? ""] as const)
      .filter(([, v]) => v !== ""),
  );
  const values: Values = {
    devices: deviceText,
    tags: ids(form, "tags").map(String),
    categories: ids(form, "categories").map(String),
    canary: text(form, "canary") ?? "",
    concurrency: text(form, "concurrency") ?? "",
    stop_on_failure: text(form, "stop_on_failure") ?? "",
    confirm_device_count: text(form, "confirm_device_count") ?? "",
    ...Object.fromEntries(askedVariables(s).map((name) => [`var_${name}`, text(form, `var_${name}`) ?? ""])),
  };
  const body = {
    devices: deviceText
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((v) => (/^\d+$/.test(v) ? Number(v) : Number.NaN)),
    tags: ids(form, "tags"),
    categories: ids(form, "categories"),
    dynamic_vars: vars,
    dry_run: dryRun,
    canary: number("canary"),
    concurrency: number("concurrency"),
    stop_on_failure: text(form, "stop_on_failure") === "true",
    confirm_device_count: dryRun ? undefined : number("confirm_device_count"),
  };
  return { body, values };
}

function DeployForm(props: {
  c: Context<WebEnv>;
  snippet: Snippet;
  choices: TargetChoices;
  values: Values;
  problems?: FieldProblems;
  preview?: ReturnType<typeof dryRunAnswer>;
}) {
  const { snippet: s, values: v, problems: p, choices, preview } = props;
  const picked = (field: string, id: number) => ([] as string[]).concat(v[field] ?? []).includes(String(id));
  const str = (field: string) => String(v[field] ?? "");
  const asked = askedVariables(s);
  const count = preview?.device_count;
  return (
    <CsrfForm action={`/snippets/${s.id}/deploy`} csrf={props.c.var.session.csrfToken} class="entity-form">
      <OtherProblems problems={p} fields={FIELDS} />
      <h3>Targets</h3>
      <div class="grid-form">
        {choices.tags && (
          <Field id="d-tags" name="tags" label="Devices with any of these tags" problems={p}>
            <select id="d-tags" name="tags" multiple size={4}>
              {choices.tags.map(([id, name]) => (
                <option value={String(id)} selected={picked("tags", id)}>
                  {name}
                </option>
              ))}
            </select>
          </Field>
        )}
        {choices.categories && (
          <Field id="d-categories" name="categories" label="Devices in any of these categories" problems={p}>
            <select id="d-categories" name="categories" multiple size={4}>
              {choices.categories.map(([id, name]) => (
                <option value={String(id)} selected={picked("categories", id)}>
                  {name}
                </option>
              ))}
            </select>
          </Field>
        )}
        <Field id="d-devices" name="devices" label="Device ids" problems={p} hint="Comma-separated, e.g. 12, 40.">
          <input type="text" id="d-devices" name="devices" value={str("devices")} />
        </Field>
      </div>
      {asked.length > 0 && (
        <>
          <h3>Variables</h3>
          <div class="grid-form">
            {asked.map((name) => (
              <Field
                id={`d-var-${name}`}
                name={`var_${name}`}
                label={`{${name}}`}
                hint="Empty: each device's custom attribute of this name."
              >
                <input type="text" id={`d-var-${name}`} name={`var_${name}`} value={str(`var_${name}`)} />
              </Field>
            ))}
          </div>
          {p?.dynamic_vars && (
            <div class="field-error" id="d-vars-error" role="alert">
              {p.dynamic_vars.join("; ")}
            </div>
          )}
        </>
      )}
      <h3>Guard rails</h3>
      <div class="grid-form">
        <Field
          id="d-canary"
          name="canary"
          label="Canary devices"
          problems={p}
          hint="Pushed first; the rest only if all succeed."
        >
          <input type="number" id="d-canary" name="canary" min="0" value={str("canary")} />
        </Field>
        <Field id="d-concurrency" name="concurrency" label="Pushes at once" problems={p} hint="Default 10.">
          <input type="number" id="d-concurrency" name="concurrency" min="1" value={str("concurrency")} />
        </Field>
        <div class="field">
          <label class="check">
            <input type="checkbox" name="stop_on_failure" value="true" checked={v.stop_on_failure === "true"} /> Stop
            after a failed push
          </label>
        </div>
        {count !== undefined && (
          <Field
            id="d-confirm"
            name="confirm_device_count"
            label={`Type ${count} to confirm the device count`}
            problems={p}
            hint={count > CONFIRM_ABOVE ? `Required above ${CONFIRM_ABOVE} devices.` : "Optional at this size."}
          >
            <input
              type="number"
              id="d-confirm"
              name="confirm_device_count"
              min="1"
              value={str("confirm_device_count")}
            />
          </Field>
        )}
      </div>
      <div class="actions">
        <button type="submit" name="action" value="preview" class={count === undefined ? "" : "secondary"}>
          Preview (dry run)
        </button>
        {count !== undefined && (
          <button type="submit" name="action" value="deploy" data-confirm={`Push to ${plural(count, "device")} now?`}>
            {`Deploy to ${plural(count, "device")}`}
          </button>
        )}
      </div>
    </CsrfForm>
  );
}

function Preview(props: { preview: ReturnType<typeof dryRunAnswer> }) {
  const shown = props.preview.devices.slice(0, 50);
  return (
    <section class="card" id="preview">
      <h2>{`Preview: ${plural(props.preview.device_count, "device")}`}</h2>
      <p class="muted">The exact lines each device gets. Nothing was sent.</p>
      <div class="table-wrap">
        <table id="preview-list">
          <thead>
            <tr>
              <th>Device</th>
              <th>Lines</th>
              <th>Rollback</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((d) => (
              <tr>
                <td>
                  <a href={`/devices/${d.device_id}`}>{d.device_name}</a>
                </td>
                <td>
                  <pre class="snippet">{d.lines.join("\n")}</pre>
                </td>
                <td>{d.rollback_lines.length ? <pre class="snippet">{d.rollback_lines.join("\n")}</pre> : ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {props.preview.device_count > shown.length && (
        <p class="muted">{`and ${plural(props.preview.device_count - shown.length, "more device")}`}</p>
      )}
    </section>
  );
}

async function snippetPage(
  c: Context<WebEnv>,
  status: 200 | 422,
  s: Snippet,
  deploy?: { values: Values; problems?: FieldProblems; preview?: ReturnType<typeof dryRunAnswer> },
) {
  const canWrite = c.var.auth.abilities.has("snippets.write");
  const choices = canWrite ? await targetChoices(c) : null;
  const done = {
    created: "Snippet added.",
    saved: "Changes saved.",
    remediation: "Remediation snippet made from the compliance result: preview it on the device, then deploy it.",
  }[c.req.query("done") ?? ""];
  return renderPage(c, status, {
    title: String(s.name),
    session: c.var.session,
    children: (
      <>
        <section class="card">
          <p class="muted">
            <a href="/snippets">Snippets</a>
          </p>
          <h1>{String(s.name)}</h1>
          {done && (
            <p class="alert success" role="status">
              {done}
            </p>
          )}
          <p>{String(s.description)}</p>
          <dl class="details">
            <dt>Variables</dt>
            <dd>
              {(s.variables as string[]).length
                ? (s.variables as string[]).map((v) => <code>{`{${v}}`}</code>)
                : "none"}
            </dd>
            <dt>Changed</dt>
            <dd>
              <Time at={new Date(String(s.updated_at))} none="" />
            </dd>
          </dl>
          <h2>Lines</h2>
          <pre id="snippet-content">{String(s.content)}</pre>
          {s.rollback_content ? (
            <>
              <h3>Rollback lines</h3>
              <pre>{String(s.rollback_content)}</pre>
            </>
          ) : null}
          <p class="actions">
            <a href={`/snippets/deployments?snippet=${s.id}`}>Deployments</a>
            {canWrite && <a href={`/snippets/${s.id}/edit`}>Edit</a>}
            {canWrite && (
              <CsrfForm
                action={`/snippets/${s.id}/delete`}
                csrf={c.var.session.csrfToken}
                class="inline"
                confirm={`Delete the snippet ${String(s.name)}?`}
              >
                <button type="submit" class="link-button">
                  Delete
                </button>
              </CsrfForm>
            )}
          </p>
        </section>
        {deploy?.preview && <Preview preview={deploy.preview} />}
        {choices && (
          <section class="card" id="deploy">
            <h2>Deploy</h2>
            <p class="muted">
              Preview first: the dry run renders each device's lines and counts the devices; then deploy, confirming the
              count.
            </p>
            <DeployForm
              c={c}
              snippet={s}
              choices={choices}
              values={deploy?.values ?? {}}
              problems={deploy?.problems}
              preview={deploy?.preview}
            />
          </section>
        )}
      </>
    ),
  });
}

/** A snippet's page: its lines, and the deploy with its dry-run preview and guard rails. */
export function registerSnippetDeployPages(web: Hono<WebEnv>): void {
  const snippetOf = (c: Context<WebEnv>) =>
    snippetsResource.show(c.var.services.db, pathId(c.req.param("id")!, "Snippet"), c.var.auth.scope);

  web.get("/snippets/:id{[0-9]+}", requirePage("snippets.read"), async (c) => snippetPage(c, 200, await snippetOf(c)));

  web.post("/snippets/:id{[0-9]+}/deploy", requirePage("snippets.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const s = await snippetOf(c);
    const dryRun = text(form, "action") !== "deploy";
    const { body, values } = deployBody(form, s, dryRun);
    try {
      const answer = await deploySnippet(deployActorOf(c), s.id, parsedBy(DeployInput, body));
      if ("dryRun" in answer) return snippetPage(c, 200, s, { values, preview: answer.dryRun });
      return c.redirect(`/snippets/deployments/${answer.deploymentId}`, 303);
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      // The count field stays once a preview counted the devices: a refused deploy is shown with the new count.
      let preview: ReturnType<typeof dryRunAnswer> | undefined;
      if (!dryRun) {
        const again = await deploySnippet(
          deployActorOf(c),
          s.id,
          parsedBy(DeployInput, { ...body, dry_run: true }),
        ).catch(() => null);
        if (again && "dryRun" in again) preview = again.dryRun;
      }
      return snippetPage(c, 422, s, { values, problems, preview });
    }
  });
}

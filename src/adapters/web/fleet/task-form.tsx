import type { Context, Hono } from "hono";
import { categoriesResource } from "../../../modules/categories/index.ts";
import { deviceListSpec, listDevices } from "../../../modules/devices/index.ts";
import { tagsResource } from "../../../modules/tags/index.ts";
import { canonicalTimeZone, cronProblem, cronText, nextRuns } from "../../../kernel/cron.ts";
import { TaskInput, type TaskOut } from "../../../modules/tasks/index.ts";
import { saveTask, setPaused, showTask } from "../../../modules/tasks/index.ts";
import { TASK_TYPE_DEFS, TASK_TYPES, type TaskType } from "../../../modules/tasks/index.ts";
import { firstPageQuery } from "../../../platform/http/list.ts";
import { ApiError } from "../../../platform/http/errors.ts";
import { listPresets } from "../../../modules/discovery/index.ts";
import { snippetsResource } from "../../../modules/snippets/index.ts";
import type { WebEnv } from "../env.ts";
import {
  Field,
  fieldProblems,
  OtherProblems,
  parsedBy,
  readForm,
  text,
  texts,
  type FieldProblems,
  type Form,
} from "../form.tsx";
import { Time } from "../format.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";
import { taskCtxOf } from "./task-context.ts";

/** Types offered to every writer; a snippet task also needs snippets.write (snippetTypes). */
const FORM_TYPES: TaskType[] = TASK_TYPES.filter((t) => t !== "snippet");
/** The deploy settings of a snippet task, as the form names them (snippet_options in the API). */
const SNIPPET_NUMBERS = ["canary", "concurrency", "confirm_device_count"] as const;
const TARGET_LISTS = ["devices", "tags", "categories"] as const;
const LIST_LIMIT = 500;
/** Runs the schedule helper shows. */
const PREVIEW_RUNS = 5;

/** Examples the schedule field names; typed, not picked, so the form needs no script. */
const EXAMPLES: [string, string][] = [
  ["0 2 * * *", "every night at 02:00"],
  ["30 */4 * * *", "every 4 hours at :30"],
  ["0 6 * * 1-5", "weekdays at 06:00"],
  ["0 3 * * 0", "Sundays at 03:00"],
];

type Values = {
  task_name: string;
  task_desc: string;
  task_type: string;
  task_cron: string;
  timezone: string;
  is_paused: boolean;
  notify_on_failure: boolean;
  devices: string[];
  tags: string[];
  categories: string[];
  scan_preset_id: string;
  snippet_id: string;
  canary: string;
  concurrency: string;
  confirm_device_count: string;
  stop_on_failure: boolean;
  /** dynamic_vars as `name=value` lines. */
  variables: string;
};

const numberText = (n: unknown) => (typeof n === "number" ? String(n) : "");

/** A number field as the API's body: empty is left out, digits a number, anything else left for the schema to refuse. */
const numberOf = (raw: string) =>
  raw.trim() === "" ? undefined : /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw;

function valuesOf(t: TaskOut): Values {
  const options = t.snippet_options ?? {};
  return {
    task_name: t.task_name,
    task_desc: t.task_desc,
    task_type: t.task_type,
    task_cron: t.task_cron,
    timezone: t.timezone,
    is_paused: t.is_paused,
    notify_on_failure: t.notify_on_failure,
    devices: t.devices.map(String),
    tags: t.tags.map(String),
    categories: t.categories.map(String),
    scan_preset_id: t.scan_preset_id ? String(t.scan_preset_id) : "",
    snippet_id: t.snippet_id ? String(t.snippet_id) : "",
    canary: numberText(options.canary),
    concurrency: numberText(options.concurrency),
    confirm_device_count: numberText(options.confirm_device_count),
    stop_on_failure: options.stop_on_failure === true,
    variables: Object.entries((options.dynamic_vars ?? {}) as Record<string, unknown>)
      .map(([name, value]) => `${name}=${String(value)}`)
      .join("\n"),
  };
}

function valuesFrom(form: Form): Values {
  return {
    task_name: text(form, "task_name") ?? "",
    task_desc: text(form, "task_desc") ?? "",
    task_type: text(form, "task_type") ?? "",
    task_cron: text(form, "task_cron") ?? "",
    timezone: text(form, "timezone") ?? "",
    is_paused: text(form, "is_paused") === "true",
    notify_on_failure: text(form, "notify_on_failure") === "true",
    devices: texts(form, "devices"),
    tags: texts(form, "tags"),
    categories: texts(form, "categories"),
    scan_preset_id: text(form, "scan_preset_id") ?? "",
    snippet_id: text(form, "snippet_id") ?? "",
    canary: text(form, "canary") ?? "",
    concurrency: text(form, "concurrency") ?? "",
    confirm_device_count: text(form, "confirm_device_count") ?? "",
    stop_on_failure: text(form, "stop_on_failure") === "true",
    variables: text(form, "variables") ?? "",
  };
}

/** `name=value` lines as dynamic_vars (a line without `=` names a variable with an empty value, for the API to judge). */
function variablesOf(lines: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of lines.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const at = line.indexOf("=");
    vars[(at < 0 ? line : line.slice(0, at)).trim()] = at < 0 ? "" : line.slice(at + 1).trim();
  }
  return vars;
}

/** The form as the API's task body: only the target lists the type reads are sent (the others must be empty). */
function inputOf(v: Values): Record<string, unknown> {
  const input: Record<string, unknown> = {
    task_name: v.task_name,
    task_desc: v.task_desc,
    task_type: v.task_type || undefined,
    task_cron: v.task_cron,
    is_paused: v.is_paused,
    notify_on_failure: v.notify_on_failure,
  };
  if (v.timezone.trim()) input.timezone = v.timezone.trim();
  const uses = TASK_TYPE_DEFS[v.task_type as TaskType]?.targets;
  for (const list of TARGET_LISTS) if (uses === list || uses === "lists") input[list] = v[list].map(Number);
  if (v.task_type === "discovery_scan")
    input.scan_preset_id = /^\d{1,9}$/.test(v.scan_preset_id) ? Number(v.scan_preset_id) : null;
  if (v.task_type === "snippet") {
    input.snippet_id = /^\d{1,9}$/.test(v.snippet_id) ? Number(v.snippet_id) : null;
    const options: Record<string, unknown> = { stop_on_failure: v.stop_on_failure };
    for (const name of SNIPPET_NUMBERS) {
      const n = numberOf(v[name]);
      if (n !== undefined) options[name] = n;
    }
    const vars = variablesOf(v.variables);
    if (Object.keys(vars).length) options.dynamic_vars = vars;
    input.snippet_options = options;
  }
  return input;
}

/** The next runs of what was typed, or why there are none (said next to the schedule field). */
function preview(v: Values, now: Date): { runs?: Date[]; problem?: string } {
  const cron = cronText(v.task_cron);
  const problem = cronProblem(cron);
  if (problem) return { problem: `task_cron ${problem}` };
  const zone = v.timezone.trim() ? canonicalTimeZone(v.timezone.trim()) : "UTC";
  if (!zone)
    return { problem: "timezone must be an IANA time zone name such as Europe/Berlin, America/New_York or UTC" };
  return { runs: nextRuns({ cron, timezone: zone }, now, PREVIEW_RUNS) };
}

/**
 * A refusal's problems by form field: snippet_options.canary is the form's canary field, a variable's problem
 * belongs to the variables (said with its name).
 */
function formProblems(err: unknown): FieldProblems | null {
  if (!(err instanceof ApiError) || err.status !== 422 || !err.errors) return fieldProblems(err);
  const renamed: Record<string, string[]> = {};
  for (const [key, messages] of Object.entries(err.errors)) {
    const option = /^snippet_options\.(\w+)/.exec(key)?.[1];
    const field = option === "dynamic_vars" ? "variables" : option && option in OPTION_FIELDS ? option : key;
    const said = messages.map((m) =>
      field === "variables"
        ? m.replace(/^snippet_options\.dynamic_vars\.?/, "")
        : field !== key && m.startsWith(`${key} `)
          ? `${field} ${m.slice(key.length + 1)}`
          : m,
    );
    (renamed[field] ??= []).push(...said);
  }
  return fieldProblems(new ApiError(422, err.message, renamed));
}

/** The snippet options the form has a field for (dynamic_vars: the variables). */
const OPTION_FIELDS = { canary: 1, concurrency: 1, confirm_device_count: 1, stop_on_failure: 1 };

/** Snippets a snippet task may deploy: listed for a role that may push them (snippets.write) and list them. */
async function snippetChoices(c: Context<WebEnv>): Promise<[number, string][] | null> {
  const { abilities, scope } = c.var.auth;
  if (!abilities.has("snippets.write") || !abilities.has("snippets.read")) return null;
  const { rows } = await snippetsResource.list(
    c.var.services.db,
    scope,
    firstPageQuery(snippetsResource.listSpec, LIST_LIMIT, "name"),
  );
  return rows.map((r) => [r.id, String(r.name)]);
}

async function targetChoices(c: Context<WebEnv>) {
  const { db } = c.var.services;
  const { scope, abilities } = c.var.auth;
  const [deviceRows, tagRows, categoryRows] = await Promise.all([
    abilities.has("devices.read")
      ? listDevices(db, scope, firstPageQuery(deviceListSpec, LIST_LIMIT, "device_name")).then((r) =>
          r.rows.map((d) => [d.id, d.device_name] as [number, string]),
        )
      : null,
    abilities.has("tags.read")
      ? tagsResource
          .list(db, scope, firstPageQuery(tagsResource.listSpec, LIST_LIMIT, "name"))
          .then((r) => r.rows.map((t) => [t.id, String(t.name)] as [number, string]))
      : null,
    abilities.has("categories.read")
      ? categoriesResource
          .list(db, scope, firstPageQuery(categoriesResource.listSpec, LIST_LIMIT, "name"))
          .then((r) => r.rows.map((t) => [t.id, String(t.name)] as [number, string]))
      : null,
  ]);
  return { devices: deviceRows, tags: tagRows, categories: categoryRows };
}

async function formPage(
  c: Context<WebEnv>,
  status: 200 | 422,
  props: {
    title: string;
    action: string;
    values: Values;
    problems?: FieldProblems;
    task?: TaskOut;
    showPreview?: boolean;
  },
) {
  const { values: v, problems: p = {} } = props;
  const choices = await targetChoices(c);
  const snippets = await snippetChoices(c);
  // A snippet task pushes configuration: only a role with snippets.write may make or change one (as the API).
  const mayNotSave = props.task?.task_type === "snippet" && !snippets;
  // Scan presets, as the API lists them: for a role that reads devices and sees every one.
  const presets =
    c.var.auth.abilities.has("devices.read") && c.var.auth.scope.all ? await listPresets(c.var.services.db) : null;
  const schedule = props.showPreview
    ? preview(v, c.var.services.clock.now())
    : props.task
      ? { runs: props.task.next_runs.map((r) => new Date(r)) }
      : undefined;
  const problems = {
    ...p,
    ...(schedule?.problem && !p.task_cron ? { task_cron: [schedule.problem.replace(/^task_cron /, "")] } : {}),
  };
  const offered: TaskType[] = snippets ? [...FORM_TYPES, "snippet"] : FORM_TYPES;
  const types = props.task && !offered.includes(props.task.task_type) ? [props.task.task_type, ...offered] : offered;
  const Targets = (s: { name: (typeof TARGET_LISTS)[number]; label: string }) => {
    const options = choices[s.name];
    if (!options) return null;
    return (
      <Field
        id={`t-${s.name}`}
        name={s.name}
        label={s.label}
        problems={problems}
        hint="Used by the types that name them; Ctrl/Cmd-click picks several."
      >
        <select id={`t-${s.name}`} name={s.name} multiple size={Math.min(6, Math.max(3, options.length))}>
          {options.map(([id, name]) => (
            <option value={String(id)} selected={v[s.name].includes(String(id))}>
              {name}
            </option>
          ))}
        </select>
      </Field>
    );
  };
  return renderPage(c, status, {
    title: props.title,
    session: c.var.session,
    children: (
      <section class="card">
        <p class="muted">
          <a href="/tasks">Tasks</a>
        </p>
        <h1>{props.title}</h1>
        <CsrfForm action={props.action} csrf={c.var.session.csrfToken} class="grid-form entity-form">
          <OtherProblems
            problems={problems}
            fields={[
              "task_name",
              "task_desc",
              "task_type",
              "task_cron",
              "timezone",
              ...TARGET_LISTS,
              ...(presets ? ["scan_preset_id"] : []),
              ...(snippets ? ["snippet_id", "variables", ...SNIPPET_NUMBERS] : []),
            ]}
          />
          <Field id="t-task_name" name="task_name" label="Name" problems={problems}>
            <input type="text" id="t-task_name" name="task_name" value={v.task_name} />
          </Field>
          <Field id="t-task_type" name="task_type" label="What it does" problems={problems}>
            <select id="t-task_type" name="task_type" disabled={props.task?.is_system}>
              {types.map((t) => (
                <option
                  value={t}
                  selected={v.task_type === t}
                >{`${t}: ${TASK_TYPE_DEFS[t].describe.replace(/`/g, "")}`}</option>
              ))}
            </select>
            {props.task?.is_system && <input type="hidden" name="task_type" value={props.task.task_type} />}
          </Field>
          <Field id="t-task_desc" name="task_desc" label="Description" problems={problems}>
            <input type="text" id="t-task_desc" name="task_desc" value={v.task_desc} />
          </Field>
          {presets && (
            <Field
              id="t-scan_preset_id"
              name="scan_preset_id"
              label="Scan preset"
              problems={problems}
              hint="discovery_scan tasks: the preset each run scans (Discovery page)."
            >
              <select id="t-scan_preset_id" name="scan_preset_id">
                <option value="">None</option>
                {presets.map((p) => (
                  <option value={String(p.id)} selected={v.scan_preset_id === String(p.id)}>
                    {p.name}
                  </option>
                ))}
              </select>
            </Field>
          )}
          {snippets && (
            <fieldset class="form-row grid-form entity-form">
              <legend>Snippet tasks</legend>
              <Field
                id="t-snippet_id"
                name="snippet_id"
                label="Snippet"
                problems={problems}
                hint="snippet tasks: the snippet each run deploys to the devices, tags and categories below (none: every device)."
              >
                <select id="t-snippet_id" name="snippet_id">
                  <option value="">None</option>
                  {snippets.map(([id, name]) => (
                    <option value={String(id)} selected={v.snippet_id === String(id)}>
                      {name}
                    </option>
                  ))}
                </select>
              </Field>
              <Field
                id="t-variables"
                name="variables"
                label="Variables"
                problems={problems}
                hint="One a line, name=value; a variable not given is each device's custom attribute."
              >
                <textarea id="t-variables" name="variables" rows={3} class="mono">
                  {v.variables}
                </textarea>
              </Field>
              <Field
                id="t-canary"
                name="canary"
                label="Canary devices"
                problems={problems}
                hint="Pushed first, alone; empty: none."
              >
                <input type="text" inputmode="numeric" id="t-canary" name="canary" value={v.canary} />
              </Field>
              <Field
                id="t-concurrency"
                name="concurrency"
                label="Pushes at once"
                problems={problems}
                hint="1 to 100; empty: the deploy's default."
              >
                <input type="text" inputmode="numeric" id="t-concurrency" name="concurrency" value={v.concurrency} />
              </Field>
              <Field
                id="t-confirm_device_count"
                name="confirm_device_count"
                label="Confirmed device count"
                problems={problems}
                hint="A run reaching another number of devices pushes nothing; required above 25 devices."
              >
                <input
                  type="text"
                  inputmode="numeric"
                  id="t-confirm_device_count"
                  name="confirm_device_count"
                  value={v.confirm_device_count}
                />
              </Field>
              <label class="check">
                <input type="checkbox" name="stop_on_failure" value="true" checked={v.stop_on_failure} /> Stop after a
                failure
              </label>
            </fieldset>
          )}
          {mayNotSave && (
            <p class="alert warning" id="snippet-task-refusal">
              A snippet task pushes configuration: changing it needs the snippets.write ability.
            </p>
          )}
          <Targets name="devices" label="Devices" />
          <Targets name="tags" label="Tags" />
          <Targets name="categories" label="Categories" />
          <Field
            id="t-task_cron"
            name="task_cron"
            label="Schedule (cron: minute hour day month weekday)"
            problems={problems}
            hint={EXAMPLES.map(([cron, words]) => `${cron} = ${words}`).join("; ")}
          >
            <input type="text" id="t-task_cron" name="task_cron" value={v.task_cron} class="mono" />
          </Field>
          <Field
            id="t-timezone"
            name="timezone"
            label="Time zone"
            problems={problems}
            hint="IANA name, e.g. Europe/Berlin; empty: the settings' zone."
          >
            <input type="text" id="t-timezone" name="timezone" value={v.timezone} />
          </Field>
          <div class="field" id="schedule-preview">
            <label>Next runs</label>
            {schedule?.runs ? (
              schedule.runs.length ? (
                <ol>
                  {schedule.runs.map((r) => (
                    <li>
                      <Time at={r} none="" />
                    </li>
                  ))}
                </ol>
              ) : (
                <p class="muted">none (paused)</p>
              )
            ) : (
              <p class="muted">Show next runs to check the schedule before saving.</p>
            )}
            <button type="submit" name="preview" value="true" class="secondary">
              Show next runs
            </button>
          </div>
          <div class="field">
            <label class="check">
              <input type="checkbox" name="is_paused" value="true" checked={v.is_paused} /> Paused
            </label>
            <label class="check">
              <input type="checkbox" name="notify_on_failure" value="true" checked={v.notify_on_failure} /> Mail
              failures
            </label>
          </div>
          <div class="actions">
            {!mayNotSave && <button type="submit">Save task</button>}
            <a href={props.task ? `/tasks/${props.task.id}` : "/tasks"}>Cancel</a>
          </div>
        </CsrfForm>
      </section>
    ),
  });
}

/**
 * Create and edit tasks, with a schedule helper that shows the next runs of what was typed (croner, as the
 * scheduler reads it), and pause / resume: the API's task service with the user's role and scope.
 */
export function registerTaskFormPages(web: Hono<WebEnv>): void {
  web.get("/tasks/new", requirePage("tasks.write"), (c) =>
    formPage(c, 200, {
      title: "New task",
      action: "/tasks/new",
      values: {
        task_name: "",
        task_desc: "",
        // The Discovery page's "Schedule" link names a type and its preset.
        task_type: FORM_TYPES.includes(c.req.query("task_type") as TaskType)
          ? c.req.query("task_type")!
          : "download_devices",
        task_cron: "0 2 * * *",
        timezone: "",
        is_paused: false,
        notify_on_failure: false,
        devices: [],
        tags: [],
        categories: [],
        scan_preset_id: c.req.query("scan_preset_id") ?? "",
        snippet_id: c.req.query("snippet_id") ?? "",
        canary: "",
        concurrency: "",
        confirm_device_count: "",
        stop_on_failure: false,
        variables: "",
      },
    }),
  );

  web.post("/tasks/new", requirePage("tasks.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const values = valuesFrom(form);
    if (text(form, "preview"))
      return formPage(c, 200, { title: "New task", action: "/tasks/new", values, showPreview: true });
    try {
      const task = await saveTask(taskCtxOf(c), parsedBy(TaskInput, inputOf(values)), null, "create");
      return c.redirect(`/tasks/${task.id}?done=created`, 303);
    } catch (err) {
      const problems = formProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, { title: "New task", action: "/tasks/new", values, problems });
    }
  });

  web.get("/tasks/:id/edit", requirePage("tasks.write"), async (c) => {
    const task = await showTask(taskCtxOf(c), pathId(c.req.param("id"), "Task"));
    return formPage(c, 200, {
      title: `Edit ${task.task_name}`,
      action: `/tasks/${task.id}/edit`,
      values: valuesOf(task),
      task,
    });
  });

  web.post("/tasks/:id/edit", requirePage("tasks.write"), async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const task = await showTask(taskCtxOf(c), pathId(c.req.param("id"), "Task"));
    const values = valuesFrom(form);
    const page = { title: `Edit ${task.task_name}`, action: `/tasks/${task.id}/edit`, values, task };
    if (text(form, "preview")) return formPage(c, 200, { ...page, showPreview: true });
    try {
      await saveTask(taskCtxOf(c), parsedBy(TaskInput.partial(), inputOf(values)), task.id, "patch");
      return c.redirect(`/tasks/${task.id}?done=saved`, 303);
    } catch (err) {
      const problems = formProblems(err);
      if (!problems) throw err;
      return formPage(c, 422, { ...page, problems });
    }
  });

  web.post("/tasks/:id/:action{pause|resume}", requirePage("tasks.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const pause = c.req.param("action") === "pause";
    const task = await setPaused(taskCtxOf(c), pathId(c.req.param("id"), "Task"), pause);
    return c.redirect(`/tasks/${task.id}?done=${pause ? "paused" : "resumed"}`, 303);
  });
}

import type { Context, Hono } from "hono";
import { categoriesResource } from "../../../modules/categories/index.ts";
import { deviceListSpec, listDevices } from "../../../modules/devices/index.ts";
import { tagsResource } from "../../../modules/tags/index.ts";
import { canonicalTimeZone, cronProblem, cronText, nextRuns } from "../../../kernel/cron.ts";
import { TaskInput, type TaskOut } from "../../../modules/tasks/index.ts";
import { saveTask, setPaused, showTask } from "../../../modules/tasks/index.ts";
import { TASK_TYPE_DEFS, TASK_TYPES, type TaskType } from "../../../modules/tasks/index.ts";
import { firstPageQuery } from "../../../platform/http/list.ts";
import { listPresets } from "../../../modules/discovery/index.ts";
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

/** Snippet tasks carry deploy options the API takes; the page edits them only when they already exist. */
const FORM_TYPES: TaskType[] = TASK_TYPES.filter((t) => t !== "snippet");
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
};

function valuesOf(t: TaskOut): Values {
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
  };
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
  const types =
    props.task && !FORM_TYPES.includes(props.task.task_type) ? [props.task.task_type, ...FORM_TYPES] : FORM_TYPES;
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
            <button type="submit">Save task</button>
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
      const problems = fieldProblems(err);
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
      const problems = fieldProblems(err);
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

import type { Hono } from "hono";
import { compareExclusionsResource } from "../../../modules/configs/index.ts";
import type { WebEnv } from "../env.ts";
import { type PageResource, registerResourcePages } from "./resource-pages.tsx";

/**
 * Compare exclusions (/compare-exclusions in the API): the lines a download's comparison with the stored version
 * leaves out, so a change in them alone makes no new version. A rule applies to every device: only a role that
 * sees every device may add, change or delete one.
 */
export function registerCompareExclusionPages(web: Hono<WebEnv>): void {
  registerResourcePages(web, {
    path: "/compare-exclusions",
    title: "Compare exclusions",
    singular: "compare exclusion",
    plural: "compare exclusions",
    ability: "configs",
    resource: compareExclusionsResource as unknown as PageResource,
    nameField: "pattern",
    intro:
      "Lines matching a rule are left out when a download is compared with the latest stored version, so a change in them alone (a timestamp, a counter) makes no new version; diffs leave them out when asked. Stored versions are never rewritten.",
    empty: "No compare exclusion yet.",
    wholeEstateWrites: true,
    bulkDelete: true,
    newValues: () => ({ enabled: "true", ignore_case: "false" }),
    fields: [
      {
        name: "pattern",
        label: "Pattern",
        kind: "text",
        hint: "A regular expression tested against each line (RE2, written as for JavaScript), e.g. ^! Last configuration change at",
      },
      {
        name: "command",
        label: "Command",
        kind: "text",
        emptyIsNull: true,
        hint: "Only this command's output (exact text); empty: every command.",
      },
      { name: "ignore_case", label: "Ignore case", kind: "boolean" },
      { name: "enabled", label: "Enabled", kind: "boolean", hint: "A disabled rule is kept but not applied." },
      { name: "description", label: "Description", kind: "textarea" },
    ],
    columns: [
      {
        label: "Pattern",
        cell: (r) => (
          <>
            <code>{String(r.pattern)}</code>
            {r.description ? <div class="muted">{String(r.description)}</div> : null}
          </>
        ),
      },
      { label: "Command", cell: (r) => (r.command ? <code>{String(r.command)}</code> : "every command") },
      {
        label: "State",
        cell: (r) => `${r.enabled ? "enabled" : "disabled"}${r.ignore_case ? ", ignores case" : ""}`,
      },
    ],
    deleteNote: () =>
      "Later downloads compare these lines again: a change in them alone makes a new version. Stored versions are not changed.",
  });
}

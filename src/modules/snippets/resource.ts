import { z } from "@hono/zod-openapi";
import { and, eq, inArray, or, sql, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { selectedDevices, type DeviceSelection } from "../devices/index.ts";
import { snippets, tasks, templates } from "../../db/schema/index.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter } from "../../platform/http/resource.ts";
import { freeText, singleLine } from "../../platform/http/text.ts";
import { snippetVariables } from "./render.ts";
import { plural } from "../../kernel/words.ts";

export const Snippet = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    content: z.string(),
    rollback_content: z.string(),
    template_ids: z.array(z.number().int()),
    tags: z.array(z.string()),
    variables: z
      .array(z.string())
      .openapi({ description: "The `{name}` variables the content and rollback use, device fields included" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Snippet");

const lines = (what: string) =>
  freeText(z.string().max(100_000, "must be at most 100000 characters")).refine(
    (s) => !s.includes("\r") || /^[^\r]*(\r\n[^\r]*)*$/.test(s),
    `${what} must separate lines with LF or CRLF, not a bare CR`,
  );

const SnippetInput = z
  .object({
    name: singleLine(z.string().trim().min(1, "must not be empty").max(128, "must be at most 128 characters")).openapi({
      example: "ntp servers",
    }),
    description: freeText(z.string().max(1000, "must be at most 1000 characters"))
      .optional()
      .openapi({ example: "Point NTP at the site's servers" }),
    content: lines("content")
      .refine((s) => s.trim() !== "", "must have at least one line")
      .openapi({
        description: "The configuration lines, one per line; `{name}` is a variable",
        example: "ntp server {ntp_server}\nntp source {source_interface}",
      }),
    rollback_content: lines("rollback_content").optional().openapi({
      description: "Lines pushed when a push of content fails (empty: none)",
      example: "no ntp server {ntp_server}",
    }),
    template_ids: z
      .array(
        z
          .number({ error: "must be a list of template ids" })
          .int("must be a whole number")
          .positive("must be a positive id"),
      )
      .max(100, "must have at most 100 items")
      .optional()
      .openapi({ description: "Connection templates (families) the snippet is written for; empty: any", example: [1] }),
    tags: z
      .array(singleLine(z.string().trim().min(1, "must not be empty").max(64, "must be at most 64 characters")))
      .max(50, "must have at most 50 items")
      .optional()
      .openapi({ example: ["ntp"] }),
  })
  .openapi("SnippetInput");

type SnippetRow = typeof snippets.$inferSelect;

/** Which devices a snippet task targets (the tasks module's snippet type says so from here). */
export const SNIPPET_TASK_TARGETS: DeviceSelection = "lists";

/** A snippet reaches the devices its snippet tasks target: their next runs push whatever it holds then. */
async function snippetReach(db: DbOrTx, ids: number[]): Promise<SQL> {
  const using = await db
    .select()
    .from(tasks)
    .where(and(eq(tasks.type, "snippet"), inArray(tasks.snippetId, ids)));
  return using.length ? or(...using.map((task) => selectedDevices(SNIPPET_TASK_TARGETS, task)))! : sql`0`;
}

export const snippetsResource = defineResource({
  tag: "Snippets",
  path: "/snippets",
  singular: "snippet",
  plural: "snippets",
  resource: "snippets",
  table: snippets,
  output: Snippet,
  input: SnippetInput,
  bodyLimit: 256 * 1024,
  listSpec: {
    fields: Object.keys(Snippet.shape),
    filters: {
      name: nameFilter(snippets.nameKey),
      tag: {
        describe: "A tag the snippet carries (exact)",
        build: (v) => sql`exists (select 1 from json_each(${snippets.tags}) t where ${inArray(sql`t.value`, v)})`,
      },
    },
    sorts: {
      id: snippets.id,
      name: sql`lower(${snippets.name})`,
      created_at: snippets.createdAt,
      updated_at: snippets.updatedAt,
    },
    defaultSort: "name",
    idColumn: snippets.id,
    search: {
      describe: "Substring of the name, description or content",
      build: (term) =>
        sql`(${containsText(snippets.name, term)} or ${containsText(snippets.description, term)} or ${containsText(snippets.content, term)})`,
    },
  },
  reaches: snippetReach,
  async serialize(_db, rows) {
    return (rows as SnippetRow[]).map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      content: r.content,
      rollback_content: r.rollbackContent,
      template_ids: r.templateIds,
      tags: r.tags,
      variables: snippetVariables(`${r.content}\n${r.rollbackContent}`),
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const nameKey = await checkUniqueName(ctx, snippets.nameKey, snippets.id, input.name, existing?.id ?? null, "name");
    if (input.template_ids?.length) {
      const found = new Set(
        (
          await ctx.tx.select({ id: templates.id }).from(templates).where(inArray(templates.id, input.template_ids))
        ).map((r) => r.id),
      );
      input.template_ids.forEach((id, i) => {
        if (!found.has(id))
          ctx.bag.add(`template_ids.${i}`, `template_ids.${i} ${id} is not an existing connection template`);
      });
    }
    const defaults = ctx.mode === "patch" ? {} : { description: "", rollbackContent: "", templateIds: [], tags: [] };
    const { rollback_content, template_ids, tags, ...own } = input;
    const values = {
      ...defaults,
      ...own,
      nameKey,
      rollbackContent: rollback_content,
      templateIds: template_ids && [...new Set(template_ids)],
      tags: tags && [...new Set(tags)],
    };
    return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
  },
  async beforeDelete(rows, ctx) {
    // tasks.snippet_id was added by ALTER TABLE without the schema's ON DELETE SET NULL (drizzle/0012), so the
    // database refuses the delete while a task names the snippet: clear it here, as the schema means.
    const cleared = await ctx.tx
      .update(tasks)
      .set({ snippetId: null })
      .where(
        inArray(
          tasks.snippetId,
          rows.map((r) => r.id),
        ),
      )
      .returning({ id: tasks.id });
    return cleared.length
      ? `${plural(cleared.length, "snippet task")} left without a snippet: ${cleared.length === 1 ? "it pushes" : "they push"} nothing until given one`
      : undefined;
  },
  descriptions: {
    create:
      "Variables are written `{name}`; device fields are variables too (`{device_name}`, `{device_ip}`, ... and each custom attribute by its name). See docs/snippets.md.",
    delete:
      "Deployments of the snippet keep their record and the lines each device got. A snippet task naming it pushes nothing from then on (its runs skip every device, saying why).",
  },
});

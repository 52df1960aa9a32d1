import { z } from "@hono/zod-openapi";
import { and, asc, count, eq, inArray, ne, or, sql, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { categories, commandCategories, commands, devices } from "../../db/schema/index.ts";
import { containsText } from "../../platform/http/list.ts";
import { defineResource } from "../../platform/http/resource.ts";
import { wholeNumbers } from "../../platform/http/filters.ts";
import { plural } from "../../kernel/words.ts";
import { freeText } from "../../platform/http/text.ts";

const Command = z
  .object({
    id: z.number().int(),
    command: z.string(),
    description: z.string(),
    category_ids: z.array(z.number().int()),
    categories: z.array(z.object({ id: z.number().int(), name: z.string() })),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Command");

const CommandInput = z
  .object({
    command: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(1000, "must be at most 1000 characters")
      // Sent to devices as typed: a line break would send two commands, a NUL or an escape something unseen.
      .refine(
        (s) => !/[\u0000-\u001F\u007F-\u009F]/.test(s),
        "must be one line without control characters (such as a line break, NUL or an escape)",
      )
      .openapi({ description: "The exact line sent to the device; unique", example: "show running-config" }),
    description: freeText(z.string().max(1000, "must be at most 1000 characters"))
      .optional()
      .openapi({ example: "The running configuration" }),
    category_ids: z
      .array(
        z
          .number({ error: "must be a list of category ids" })
          .int("must be a whole number")
          .positive("must be a positive id"),
      )
      .min(1, "must have at least 1 item: a command belongs to one or more categories")
      .max(100, "must have at most 100 items")
      .openapi({ description: "The categories (command groups) whose backups run the command", example: [1] }),
  })
  .openapi("CommandInput");

type CommandRow = typeof commands.$inferSelect;

async function categoriesOf(db: DbOrTx, ids: number[]): Promise<Map<number, { id: number; name: string }[]>> {
  const byCommand = new Map<number, { id: number; name: string }[]>();
  if (!ids.length) return byCommand;
  const rows = await db
    .select({ commandId: commandCategories.commandId, id: categories.id, name: categories.name })
    .from(commandCategories)
    .innerJoin(categories, eq(categories.id, commandCategories.categoryId))
    .where(inArray(commandCategories.commandId, ids))
    .orderBy(asc(categories.id));
  for (const r of rows)
    (byCommand.get(r.commandId) ?? byCommand.set(r.commandId, []).get(r.commandId)!).push({ id: r.id, name: r.name });
  return byCommand;
}

/** filter[category_id]: commands in any of the categories; 0 finds commands in none. */
const categoryFilter = {
  describe: "Category id; 0 = commands that belong to no category",
  build: (values: string[]): SQL => {
    const ids = wholeNumbers("filter[category_id]", values);
    const real = ids.filter((id) => id > 0);
    const parts: SQL[] = [];
    if (real.length)
      parts.push(
        inArray(
          commands.id,
          sql`(select ${commandCategories.commandId} from ${commandCategories} where ${inArray(commandCategories.categoryId, real)})`,
        ),
      );
    if (ids.includes(0))
      parts.push(
        sql`not exists (select 1 from ${commandCategories} where ${commandCategories.commandId} = ${commands.id})`,
      );
    return or(...parts)!;
  },
};

export const commandsResource = defineResource({
  tag: "Commands",
  path: "/commands",
  singular: "command",
  plural: "commands",
  resource: "commands",
  table: commands,
  output: Command,
  input: CommandInput,
  listSpec: {
    fields: Object.keys(Command.shape),
    filters: {
      id: { describe: "Command id", build: (v) => inArray(commands.id, wholeNumbers("filter[id]", v)) },
      command: { describe: "Exact command text", build: (v) => inArray(commands.command, v) },
      category_id: categoryFilter,
    },
    sorts: {
      id: commands.id,
      command: commands.command,
      created_at: commands.createdAt,
      updated_at: commands.updatedAt,
    },
    defaultSort: "id",
    idColumn: commands.id,
    search: {
      describe: "Substring of the command or description",
      build: (term) => sql`(${containsText(commands.command, term)} or ${containsText(commands.description, term)})`,
    },
  },
  // A command runs on every device of its categories: what it reaches is those devices.
  reaches: async (_db, ids) =>
    inArray(
      devices.categoryId,
      sql`(select ${commandCategories.categoryId} from ${commandCategories} where ${inArray(commandCategories.commandId, ids)})`,
    ),
  async serialize(db, rows) {
    const cats = await categoriesOf(
      db,
      rows.map((r) => r.id),
    );
    return (rows as CommandRow[]).map((r) => {
      const own = cats.get(r.id) ?? [];
      return {
        id: r.id,
        command: r.command,
        description: r.description,
        category_ids: own.map((c) => c.id),
        categories: own,
        created_at: r.createdAt.toISOString(),
        updated_at: r.updatedAt.toISOString(),
      };
    });
  },
  async toValues(input, existing, ctx) {
    if (input.command !== undefined) {
      // Stored configurations are kept per command text, so two commands with one text would share a history.
      const [clash] = await ctx.tx
        .select({ id: commands.id })
        .from(commands)
        .where(and(eq(commands.command, input.command), existing ? ne(commands.id, existing.id) : undefined))
        .limit(1);
      if (clash)
        ctx.bag.add(
          "command",
          `command '${input.command}' already exists (command ${clash.id}); add that one to more categories instead`,
        );
    }
    if (input.category_ids !== undefined) {
      const wanted = [...new Set(input.category_ids)];
      const found = new Set(
        (await ctx.tx.select({ id: categories.id }).from(categories).where(inArray(categories.id, wanted))).map(
          (r) => r.id,
        ),
      );
      input.category_ids.forEach((id, i) => {
        if (!found.has(id)) ctx.bag.add(`category_ids.${i}`, `category_ids.${i} ${id} is not an existing category`);
      });
    }
    const defaults = ctx.mode === "patch" ? {} : { description: "" };
    const { category_ids: _links, ...own } = input;
    return Object.fromEntries(Object.entries({ ...defaults, ...own }).filter(([, v]) => v !== undefined));
  },
  async afterWrite(id, input, ctx) {
    if (input.category_ids === undefined) return;
    await ctx.tx.delete(commandCategories).where(eq(commandCategories.commandId, id));
    await ctx.tx
      .insert(commandCategories)
      .values([...new Set(input.category_ids)].map((categoryId) => ({ commandId: id, categoryId })));
  },
  async beforeDelete(rows, ctx) {
    const ids = rows.map((r) => r.id);
    const [links] = await ctx.tx
      .select({ n: count() })
      .from(commandCategories)
      .where(inArray(commandCategories.commandId, ids));
    await ctx.tx.delete(commandCategories).where(inArray(commandCategories.commandId, ids));
    return links?.n ? `${plural(links.n, "category link")} removed` : undefined;
  },
  descriptions: {
    create:
      "category_ids must name at least one existing category. The command text is unique: stored configurations are kept per command text.",
    delete:
      "Removes the command from its categories (the answer says how many category links went); configurations already stored for it stay.",
  },
});

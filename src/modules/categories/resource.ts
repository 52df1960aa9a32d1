import { z } from "@hono/zod-openapi";
import { asc, eq, inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { categories, commandCategories, commands, deviceProfiles, devices } from "../../db/schema/index.ts";
import { type DeviceUse, deviceCounts, refuseDeleteWhileDevicesUse } from "../../platform/http/device-usage.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter } from "../../platform/http/resource.ts";
import { idFilter } from "../../platform/http/filters.ts";
import { plural } from "../../kernel/words.ts";
import { refuseIfScopingRoles } from "../../platform/auth/scope.ts";
import { freeText, singleLine } from "../../platform/http/text.ts";

const Category = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    commands: z.array(z.object({ id: z.number().int(), command: z.string() })).openapi({
      description: "The commands a backup of the category's devices runs (manage them through the commands API)",
    }),
    devices_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Category");

const CategoryInput = z
  .object({
    name: singleLine(z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters")).openapi({
      example: "Routers",
    }),
    description: freeText(z.string().max(1000, "must be at most 1000 characters"))
      .optional()
      .openapi({ example: "Running config and inventory" }),
  })
  .openapi("CategoryInput");

type CategoryRow = typeof categories.$inferSelect;

/** How devices use categories (shared counting: platform/http/device-usage.ts). */
const CATEGORY_USE: DeviceUse = { columns: [devices.categoryId] };

async function commandsOf(db: DbOrTx, ids: number[]): Promise<Map<number, { id: number; command: string }[]>> {
  const byCategory = new Map<number, { id: number; command: string }[]>();
  if (!ids.length) return byCategory;
  const rows = await db
    .select({ categoryId: commandCategories.categoryId, id: commands.id, command: commands.command })
    .from(commandCategories)
    .innerJoin(commands, eq(commands.id, commandCategories.commandId))
    .where(inArray(commandCategories.categoryId, ids))
    .orderBy(asc(commands.id));
  for (const r of rows)
    (byCategory.get(r.categoryId) ?? byCategory.set(r.categoryId, []).get(r.categoryId)!).push({
      id: r.id,
      command: r.command,
    });
  return byCategory;
}

export const categoriesResource = defineResource({
  tag: "Categories",
  path: "/categories",
  singular: "category",
  plural: "categories",
  resource: "categories",
  table: categories,
  output: Category,
  input: CategoryInput,
  listSpec: {
    fields: Object.keys(Category.shape),
    filters: { id: idFilter(categories.id, "id", "Category id"), name: nameFilter(categories.nameKey) },
    sorts: {
      id: categories.id,
      name: sql`lower(${categories.name})`,
      created_at: categories.createdAt,
      updated_at: categories.updatedAt,
    },
    defaultSort: "name",
    idColumn: categories.id,
    search: {
      describe: "Substring of the name or description",
      build: (term) => sql`(${containsText(categories.name, term)} or ${containsText(categories.description, term)})`,
    },
  },
  reaches: async (_db, ids) => inArray(devices.categoryId, ids),
  async serialize(db, rows, scope) {
    const ids = rows.map((r) => r.id);
    const [counts, cmds] = await Promise.all([deviceCounts(db, CATEGORY_USE, ids, scope), commandsOf(db, ids)]);
    return (rows as CategoryRow[]).map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      commands: cmds.get(r.id) ?? [],
      devices_count: counts.get(r.id) ?? 0,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  async toValues(input, existing, ctx) {
    const nameKey = await checkUniqueName(
      ctx,
      categories.nameKey,
      categories.id,
      input.name,
      existing?.id ?? null,
      "name",
    );
    const defaults = ctx.mode === "patch" ? {} : { description: "" };
    return Object.fromEntries(Object.entries({ ...defaults, ...input, nameKey }).filter(([, v]) => v !== undefined));
  },
  async beforeDelete(rows, ctx) {
    const ids = rows.map((r) => r.id);
    await refuseDeleteWhileDevicesUse(
      ctx.tx,
      CATEGORY_USE,
      ids,
      "Category",
      () => "move them to another category first",
    );
    await refuseIfScopingRoles(ctx.tx, "category", ids);

    const links = await ctx.tx
      .select({ commandId: commandCategories.commandId, categoryId: commandCategories.categoryId })
      .from(commandCategories)
      .where(
        inArray(
          commandCategories.commandId,
          sql`(select ${commandCategories.commandId} from ${commandCategories} where ${inArray(commandCategories.categoryId, ids)})`,
        ),
      );
    const unlinked = new Set(links.filter((l) => ids.includes(l.categoryId)).map((l) => l.commandId));
    const orphans = [...unlinked]
      .filter((c) => links.every((l) => l.commandId !== c || ids.includes(l.categoryId)))
      .sort((a, b) => a - b);
    await ctx.tx.delete(commandCategories).where(inArray(commandCategories.categoryId, ids));
    const profiles = await ctx.tx
      .update(deviceProfiles)
      .set({ categoryId: null })
      .where(inArray(deviceProfiles.categoryId, ids))
      .returning({ id: deviceProfiles.id });

    const parts: string[] = [];
    if (unlinked.size) {
      parts.push(
        `unlinked from ${plural(unlinked.size, "command")}` +
          (orphans.length
            ? ` (now in no category, so never run until added to one: command${orphans.length === 1 ? "" : "s"} ${orphans.join(", ")})`
            : ""),
      );
    }
    if (profiles.length) parts.push(`cleared from ${plural(profiles.length, "device profile")}`);
    return parts.join("; ") || undefined;
  },
  descriptions: {
    delete:
      "Refused with 409 while any device uses the category, or a role's device scope names it. Its commands are unlinked, not deleted: " +
      "the answer lists those that are now in no category (find them with GET /commands?filter[category_id]=0). Device profiles that name it lose their category default; the answer says how many.",
  },
});

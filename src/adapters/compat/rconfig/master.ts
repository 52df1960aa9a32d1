/**
 * rConfig's master data under its own field names (its StoreTagRequest, StoreCategoryRequest, StoreVendorRequest):
 * written as rConfig names them, and answered with those names beside netkeep's.
 */
import { z } from "@hono/zod-openapi";
import { jsonObjectBody, replaceJsonBody, succeeded, type CompatHook } from "./hook.ts";
import { deletedAnswer, extendData, extendTop } from "./envelope.ts";
import { withListRewrite } from "./lists.ts";

/** rConfig's field name -> netkeep's, for one resource. */
type Renames = Record<string, string>;

/** rConfig's names become netkeep's before validation; a netkeep name sent as well wins. */
export function renameFields(body: Record<string, unknown>, renames: Renames): Record<string, unknown> {
  const out = { ...body };
  for (const [theirs, ours] of Object.entries(renames)) {
    if (!(theirs in out)) continue;
    if (out[ours] === undefined) out[ours] = out[theirs];
    delete out[theirs];
  }
  return out;
}

const withTheirNames = (record: Record<string, unknown>, renames: Renames) => ({
  ...record,
  ...Object.fromEntries(Object.entries(renames).map(([theirs, ours]) => [theirs, record[ours]])),
});

/** The hooks of one resource's routes, by operationId: `<verb><Name>` as the resource helper names them. */
function resourceHooks(singular: string, plural: string, renames: Renames): Record<string, CompatHook> {
  const fields = Object.fromEntries(
    Object.entries(renames).map(([theirs, ours]) => [
      theirs,
      z.string().openapi({ description: `rConfig's name for ${ours}` }),
    ]),
  );
  const inputFields = Object.fromEntries(
    Object.entries(renames).map(([theirs, ours]) => [
      theirs,
      z
        .string()
        .optional()
        .openapi({ description: `rConfig's name for ${ours}; ${ours} wins when both are sent` }),
    ]),
  );
  // rConfig's list filters and sorts by its name field (TagController: filter[tagname], sort=tagname).
  const byName = Object.fromEntries(Object.entries(renames).filter(([, ours]) => ours === "name"));
  const request: CompatHook["request"] = async (c) => {
    const body = await jsonObjectBody(c);
    if (body) replaceJsonBody(c, renameFields(body, renames));
  };
  const write = (message: string): CompatHook => ({
    request,
    requestFields: inputFields,
    response: async (_c, body) => ({
      body: succeeded({ ...body, data: withTheirNames(body.data as Record<string, unknown>, renames) }, message),
    }),
    document: (responses) => extendData(responses, fields, true),
  });
  return {
    [`list${plural}`]: withListRewrite(
      {
        response: async (c, body) => ({
          body:
            c.req.query("fields") !== undefined
              ? body
              : { ...body, data: (body.data as Record<string, unknown>[]).map((r) => withTheirNames(r, renames)) },
        }),
        document: (responses) =>
          extendData(responses, Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])), false),
      },
      { filters: byName, sorts: byName },
      `rConfig's names are read in filters and sort too (${Object.keys(byName)
        .map((k) => `filter[${k}]`)
        .join(", ")}, sort=${Object.keys(byName)[0]}).`,
    ),
    [`delete${singular}`]: deletedAnswer(singular),
    [`get${singular}`]: {
      response: async (_c, body) => ({
        body: succeeded({ ...body, data: withTheirNames(body.data as Record<string, unknown>, renames) }, "Success"),
      }),
      document: (responses) => extendData(responses, fields, true),
    },
    [`create${singular}`]: write(`${singular} created successfully!`),
    [`replace${singular}`]: write(`${singular} edited successfully!`),
    [`update${singular}`]: write(`${singular} edited successfully!`),
  };
}

/**
 * rConfig's StoreCommandRequest sends the command's categories as `categoryArray` (its CommandController attaches
 * them); older clients as `category`: [{"id": n}] or ids. Either becomes category_ids (which wins when sent).
 */
const COMMAND_CATEGORY_FIELDS = ["categoryArray", "category"] as const;
const commandRequest: CompatHook["request"] = async (c) => {
  const body = await jsonObjectBody(c);
  if (!body || !COMMAND_CATEGORY_FIELDS.some((key) => key in body)) return;
  const out = { ...body };
  for (const key of COMMAND_CATEGORY_FIELDS) {
    if (!(key in out)) continue;
    const value = out[key];
    if (out.category_ids === undefined) {
      out.category_ids = (Array.isArray(value) ? value : [value]).map((v) =>
        v && typeof v === "object" && "id" in v ? (v as { id: unknown }).id : v,
      );
    }
    delete out[key];
  }
  replaceJsonBody(c, out);
};
const CategoryRefs = z.array(z.union([z.object({ id: z.number().int() }), z.number().int()]));
const commandWrite = (message: string): CompatHook => ({
  request: commandRequest,
  requestFields: {
    categoryArray: CategoryRefs.optional().openapi({
      description:
        'rConfig\'s name for category_ids (its StoreCommandRequest), as ids or [{"id": n}]; category_ids wins when both are sent',
      example: [1],
    }),
    category: CategoryRefs.optional().openapi({
      description: 'Older rConfig clients\' name for category_ids, as [{"id": n}] or ids',
      example: [{ id: 1 }],
    }),
  },
  response: async (_c, body) => ({ body: succeeded(body, message) }),
  document: (responses) => extendTop(responses),
});

export const masterDataHooks: Record<string, CompatHook> = {
  createCommand: commandWrite("Command created successfully!"),
  replaceCommand: commandWrite("Command edited successfully!"),
  updateCommand: commandWrite("Command edited successfully!"),
  deleteCommand: deletedAnswer("Command"),
  listCommands: withListRewrite({}, {}, "rConfig's filter[q] is read as search (docs/rconfig.md)."),
  ...resourceHooks("Tag", "Tags", { tagname: "name", tagDescription: "description" }),
  ...resourceHooks("Category", "Categories", { categoryName: "name", categoryDescription: "description" }),
  ...resourceHooks("Vendor", "Vendors", { vendorName: "name" }),
};

/**
 * rConfig's master data under its own field names (its StoreTagRequest, StoreCategoryRequest, StoreVendorRequest):
 * written as rConfig names them, and answered with those names beside netkeep's.
 */
import { z } from "@hono/zod-openapi";
import { jsonObjectBody, replaceJsonBody, succeeded, type CompatHook } from "./hook.ts";
import { extendData } from "./envelope.ts";

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

const withTheirNames = (record: Record<string, unknown>, renames: Renames) =>
  ({ ...record, ...Object.fromEntries(Object.entries(renames).map(([theirs, ours]) => [theirs, record[ours]])) });

/** The hooks of one resource's routes, by operationId: `<verb><Name>` as the resource helper names them. */
function resourceHooks(singular: string, plural: string, renames: Renames): Record<string, CompatHook> {
  const fields = Object.fromEntries(Object.entries(renames).map(([theirs, ours]) => [theirs, z.string().openapi({ description: `rConfig's name for ${ours}` })]));
  const inputFields = Object.fromEntries(Object.entries(renames).map(([theirs, ours]) => [theirs, z.string().optional().openapi({ description: `rConfig's name for ${ours}; ${ours} wins when both are sent` })]));
  const request: CompatHook["request"] = async (c) => {
    const body = await jsonObjectBody(c);
    if (body) replaceJsonBody(c, renameFields(body, renames));
  };
  const write = (message: string): CompatHook => ({
    request,
    requestFields: inputFields,
    response: async (_c, body) => ({ body: succeeded({ ...body, data: withTheirNames(body.data as Record<string, unknown>, renames) }, message) }),
    document: (responses) => extendData(responses, fields, true),
  });
  return {
    [`list${plural}`]: {
      response: async (c, body) => ({
        body: c.req.query("fields") !== undefined ? body : { ...body, data: (body.data as Record<string, unknown>[]).map((r) => withTheirNames(r, renames)) },
      }),
      document: (responses) => extendData(responses, Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])), false),
    },
    [`get${singular}`]: {
      response: async (_c, body) => ({ body: succeeded({ ...body, data: withTheirNames(body.data as Record<string, unknown>, renames) }, "Success") }),
      document: (responses) => extendData(responses, fields, true),
    },
    [`create${singular}`]: write(`${singular} created successfully!`),
    [`replace${singular}`]: write(`${singular} edited successfully!`),
    [`update${singular}`]: write(`${singular} edited successfully!`),
  };
}

/** rConfig's StoreCommandRequest sends the command's categories as `category`: [{"id": n}] or ids. */
const commandRequest: CompatHook["request"] = async (c) => {
  const body = await jsonObjectBody(c);
  if (!body || !("category" in body)) return;
  const { category, ...rest } = body;
  const ids = (Array.isArray(category) ? category : [category]).map((v) => (v && typeof v === "object" && "id" in v ? (v as { id: unknown }).id : v));
  replaceJsonBody(c, { category_ids: ids, ...rest });
};
const commandWrite: CompatHook = {
  request: commandRequest,
  requestFields: {
    category: z.array(z.union([z.object({ id: z.number().int() }), z.number().int()])).optional()
      .openapi({ description: "rConfig's name for category_ids, as [{\"id\": n}] or ids; category_ids wins when both are sent", example: [{ id: 1 }] }),
  },
};

export const masterDataHooks: Record<string, CompatHook> = {
  createCommand: commandWrite,
  replaceCommand: commandWrite,
  updateCommand: commandWrite,
  ...resourceHooks("Tag", "Tags", { tagname: "name", tagDescription: "description" }),
  ...resourceHooks("Category", "Categories", { categoryName: "name", categoryDescription: "description" }),
  ...resourceHooks("Vendor", "Vendors", { vendorName: "name" }),
};

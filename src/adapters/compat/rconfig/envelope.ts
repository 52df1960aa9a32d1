/** rConfig's answer shapes, added beside netkeep's: its success/message envelope and the Laravel paginator's fields. */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Responses } from "./hook.ts";

export const SuccessFields = {
  success: z.literal(true).openapi({ description: "rConfig's envelope: always true on a 2xx" }),
  message: z.string().openapi({ description: "rConfig's envelope: what happened" }),
};

export const PaginatorFields = {
  total: z.number().int(),
  current_page: z.number().int(),
  per_page: z.number().int(),
  last_page: z.number().int(),
  from: z.number().int().nullable(),
  to: z.number().int().nullable(),
  first_page_url: z.string(),
  last_page_url: z.string(),
  next_page_url: z.string().nullable(),
  prev_page_url: z.string().nullable(),
  path: z
    .string()
    .openapi({ description: "The Laravel paginator's fields, copied from meta and links for rConfig clients" }),
};

type Envelope = { meta: Record<string, number | null>; links: Record<string, string | null> };

/** A list envelope with the Laravel paginator's top-level fields (from meta and links) beside it. */
export function withPaginator(c: Context, body: Record<string, unknown>) {
  const { meta, links } = body as unknown as Envelope;
  const path = new URL(c.req.url);
  return {
    ...body,
    total: meta.total,
    current_page: meta.current_page,
    per_page: meta.per_page,
    last_page: meta.last_page,
    from: meta.from,
    to: meta.to,
    first_page_url: links.first,
    last_page_url: links.last,
    next_page_url: links.next,
    prev_page_url: links.prev,
    path: `${path.origin}${path.pathname}`,
  };
}

type JsonResponse = { description: string; content?: Record<string, { schema: unknown }> };
type ObjectSchema = z.ZodObject<z.ZodRawShape>;

/** Each documented 2xx JSON answer whose schema is an object, through `map`. */
function mapJsonObjects(responses: Responses, map: (schema: ObjectSchema) => z.ZodType): Responses {
  const out: Record<string, unknown> = { ...responses };
  for (const [status, response] of Object.entries(responses as Record<string, JsonResponse>)) {
    const media = response.content?.["application/json"];
    if (!/^2/.test(status) || !media || !(media.schema instanceof z.ZodObject)) continue;
    out[status] = {
      ...response,
      content: { ...response.content, "application/json": { ...media, schema: map(media.schema as ObjectSchema) } },
    };
  }
  return out as Responses;
}

/**
 * The documented 2xx JSON answers with `fields` added to their `data` record (one) or to each item of their
 * `data` list, plus `top` fields beside data (rConfig's success and message on a single record by default).
 */
export function extendData(
  responses: Responses,
  fields: z.ZodRawShape | ((record: ObjectSchema) => z.ZodRawShape),
  one: boolean,
  top: z.ZodRawShape = one ? SuccessFields : {},
): Responses {
  return mapJsonObjects(responses, (schema) => {
    const data = schema.shape.data;
    if (!data) return schema;
    const record = one ? (data as ObjectSchema) : (data as z.ZodArray<ObjectSchema>).element;
    const shape = typeof fields === "function" ? fields(record) : fields;
    // A field rConfig gives another type (all-by-deviceid's download_status) cannot extend the named schema: the
    // document would require both types (allOf). The record is then restated whole.
    const added = Object.keys(shape).some((k) => k in record.shape)
      ? z.object({ ...record.shape, ...shape })
      : record.extend(shape);
    const extended = one ? added : z.array(added);
    return schema.extend({ ...top, data: extended });
  });
}

/** The documented 2xx JSON answers with `top` fields beside their own (rConfig's success and message by default). */
export const extendTop = (responses: Responses, top: z.ZodRawShape = SuccessFields) =>
  mapJsonObjects(responses, (schema) => schema.extend(top));

/**
 * A delete's answer as rConfig's controllers give it (ApiBaseController::destroy): `success` and its message text
 * ("Tag deleted successfully!"), which rConfig clients compare; netkeep's own message (which record, and what was
 * detached from it) moves to `detail`.
 */
export const deletedAnswer = (name: string) => ({
  response: async (_c: unknown, body: Record<string, unknown>) => ({
    body: { ...body, success: true as const, message: `${name} deleted successfully!`, detail: String(body.message) },
  }),
  document: (responses: Responses) =>
    extendTop(responses, {
      ...SuccessFields,
      detail: z
        .string()
        .openapi({ description: "netkeep's own message: which record was deleted and what was detached from it" }),
    }),
});

import { z } from "@hono/zod-openapi";
import { apiRoute, jsonResponse, pathIds } from "../../platform/http/route.ts";
import { singleLine } from "../../platform/http/text.ts";
import { Template } from "./resource.ts";

export const CopyInput = z
  .object({
    name: singleLine(z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters"))
      .optional()
      .openapi({
        description: 'The copy\'s name; left out: "<name> (copy)", numbered when that is taken',
        example: "cisco-ios-lab",
      }),
  })
  .openapi("TemplateCopyInput");

const IdParams = pathIds("id");

/** The largest configuration text render takes, in characters: the largest configurations netkeep stores are a few MB. */
export const RENDER_MAX_CHARS = 4_000_000;

const RenderInput = z
  .object({
    text: z.string().max(RENDER_MAX_CHARS, `must be at most ${RENDER_MAX_CHARS} characters`).openapi({
      description: "A command's output as the device prints it (line endings \\r\\n or \\n)",
      example: "hostname r1\nenable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0\nsnmp-server community Comm-1 RO",
    }),
  })
  .openapi("TemplateRenderInput");

const RenderedMask = z
  .object({
    line: z.number().int().openapi({ description: "1-based line of the rendered text" }),
    column: z.number().int().openapi({ description: "1-based column where the replacement starts" }),
    length: z.number().int(),
    text: z.string().openapi({ description: "What stands there now", example: "<secret hidden>" }),
    layer: z.enum(["template", "generic"]).openapi({
      description: "template: one of the template's `secrets` rules; generic: netkeep's layer behind every template",
    }),
    rule: z.string().openapi({
      description:
        "`secrets[N]` (the template rule's index) or the generic rule (the keyword, or `shape:<name>` for a value known by its shape)",
      example: "secrets[2]",
    }),
    pattern: z.string().optional().openapi({ description: "The template rule's pattern" }),
  })
  .openapi("TemplateRenderMask");

const Rendered = z
  .object({
    template_id: z.number().int(),
    text: z
      .string()
      .openapi({ description: "What netkeep would store: drop filters applied, secrets masked by both layers" }),
    lines_dropped: z.number().int().openapi({ description: "Lines the template's drop filters removed" }),
    masks: z.array(RenderedMask),
  })
  .openapi("TemplateRendered");

export const renderTemplateRoute = apiRoute({
  method: "post",
  path: "/templates/{id}/render",
  operationId: "renderTemplate",
  tag: "Templates",
  ability: "templates.read",
  summary: "Show what a template would store of a text",
  description:
    "Applies the template to a configuration text as a backup would (drop filters, the template's secret rules, then netkeep's " +
    "generic masking layer) and answers the text netkeep would store, with every masked span and the rule that masked it. Nothing is stored. " +
    "For checking a template you write or copy before a device meets it (docs/configs.md, Secrets).",
  request: { params: IdParams, body: { required: true, content: { "application/json": { schema: RenderInput } } } },
  bodyLimit: 4 * RENDER_MAX_CHARS + 1024,
  responses: { 200: jsonResponse(z.object({ data: Rendered }), "What would be stored") },
});

export const copyTemplateRoute = apiRoute({
  method: "post",
  path: "/templates/{id}/copy",
  operationId: "copyTemplate",
  tag: "Templates",
  ability: "templates.write",
  summary: "Copy a template",
  description:
    "Makes a user template with the same code and description, e.g. to customise a read-only built-in one. The body is optional.",
  request: { params: IdParams, body: { required: false, content: { "application/json": { schema: CopyInput } } } },
  responses: { 201: jsonResponse(z.object({ data: Template }), "The copy; Location names its URL") },
});

import { OpenApiDocumentError, resolveRef, type JsonSchema, type OpenApiDocument } from "./openapi.ts";

/** Two schemas that both apply (allOf, or a $ref with sibling keywords): their properties and requirements add up. */
function merge(a: JsonSchema, b: JsonSchema): JsonSchema {
  const merged: JsonSchema = { ...a, ...b };
  if (a.properties || b.properties) merged.properties = { ...a.properties, ...b.properties };
  if (a.required || b.required) merged.required = [...new Set([...(a.required ?? []), ...(b.required ?? [])])];
  return merged;
}

const MAX_REF_HOPS = 32;

/**
 * A schema with its top-level `$ref` and `allOf` folded in, so its keywords can be read directly. Nested
 * schemas (properties, items) are resolved when they are read, which keeps recursive components finite.
 */
export function resolveSchema(document: OpenApiDocument, schema: JsonSchema | undefined, hops = 0): JsonSchema {
  if (!schema) return {};
  if (hops > MAX_REF_HOPS) throw new OpenApiDocumentError(`has a reference cycle through ${schema.$ref ?? "allOf"}`);
  let current = schema;
  if (current.$ref) {
    const { $ref, ...siblings } = current;
    current = merge(resolveSchema(document, resolveRef<JsonSchema>(document, { $ref }), hops + 1), siblings);
  }
  if (current.allOf) {
    const { allOf, ...rest } = current;
    current = [...allOf.map((part) => resolveSchema(document, part, hops + 1)), rest].reduce(merge, {});
  }
  return current;
}

/** The variants of an anyOf/oneOf, resolved. */
export const variantsOf = (document: OpenApiDocument, schema: JsonSchema) =>
  (schema.anyOf ?? schema.oneOf ?? []).map((v) => resolveSchema(document, v));

/** A variant that only adds a `format` to its parent, as in `anyOf: [{format: ipv4}, {format: hostname}]`. */
export const isFormatOnly = (variant: JsonSchema) =>
  Object.keys(variant).every((k) => k === "format" || k === "description") && variant.format !== undefined;

/** The JSON types a value may have: `type`, or what the variants, enum or shape imply. */
export function typesOf(document: OpenApiDocument, schema: JsonSchema): string[] {
  if (schema.type !== undefined) return Array.isArray(schema.type) ? schema.type : [schema.type];
  if (schema.const !== undefined) return [jsonType(schema.const)];
  if (schema.enum) return [...new Set(schema.enum.map(jsonType))];
  const variants = variantsOf(document, schema);
  if (variants.length && !variants.every(isFormatOnly))
    return [...new Set(variants.flatMap((v) => typesOf(document, v)))];
  if (schema.properties || schema.additionalProperties !== undefined) return ["object"];
  if (schema.items) return ["array"];
  return [];
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

/** "a, b or c" */
export function listInWords(items: string[], conjunction = "or"): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} ${conjunction} ${items.at(-1)}`;
}

/** The type words of a schema, one per JSON type it allows; an array's words carry its item type. */
function typeWords(document: OpenApiDocument, schema: JsonSchema | undefined): string[] {
  const resolved = resolveSchema(document, schema);
  const variants = variantsOf(document, resolved);
  // Each variant says its own words, so an array variant keeps its item type.
  if (resolved.type === undefined && variants.length && !variants.every(isFormatOnly))
    return [...new Set(variants.flatMap((v) => typeWords(document, v)))];
  return typesOf(document, resolved).map((type) => {
    if (type !== "array") return type;
    const items = resolved.items ? typeInWords(document, resolved.items) : "any";
    return `array of ${items.includes(" or ") ? `(${items})` : items}`;
  });
}

/** The type as a reader says it: `string`, `integer or null`, `array of string`, `object`. */
export function typeInWords(document: OpenApiDocument, schema: JsonSchema | undefined): string {
  const words = typeWords(document, schema);
  if (!words.length) return "any";
  // null reads best last: "string or null".
  return listInWords([...words.filter((w) => w !== "null"), ...words.filter((w) => w === "null")]);
}

/** Whether a field's value is an object whose own fields deserve listing (as `parent.child`). */
export function objectWithFields(document: OpenApiDocument, schema: JsonSchema): JsonSchema | undefined {
  const resolved = resolveSchema(document, schema);
  if (resolved.properties && Object.keys(resolved.properties).length) return resolved;
  return variantsOf(document, resolved).find((v) => v.properties && Object.keys(v.properties).length);
}

import type { JsonSchema, OpenApiDocument } from "./openapi.ts";
import { patternInWords } from "./patterns.ts";
import { isFormatOnly, listInWords, resolveSchema, typeInWords, typesOf, variantsOf } from "./schema.ts";
import { plural } from "../../kernel/words.ts";

/** JSON-schema `format` values in words; an unknown format is named as it is. */
export const FORMAT_WORDS: Record<string, string> = {
  email: "an email address",
  "idn-email": "an email address",
  uri: "an absolute URL",
  url: "an absolute URL",
  "uri-reference": "a URL or a path",
  "date-time": "a date and time in ISO-8601, e.g. 2024-05-01T12:00:00Z",
  date: "a date as YYYY-MM-DD",
  time: "a time of day as HH:MM:SS",
  duration: "an ISO-8601 duration, e.g. PT30M",
  ipv4: "an IPv4 address",
  ipv6: "an IPv6 address",
  hostname: "a hostname",
  "idn-hostname": "a hostname",
  uuid: "a UUID",
  binary: "a file (binary data)",
  byte: "base64-encoded data",
  base64: "base64-encoded data",
  regex: "a regular expression",
  password: "a secret (write-only)",
};

/** Formats that only restate the JSON type. */
const SILENT_FORMATS = new Set(["int32", "int64", "float", "double", "safeint"]);

export const formatInWords = (format: string) => FORMAT_WORDS[format] ?? `format: ${format}`;

/** Literal values as a reader sees them: strings bare, the rest as JSON. */
export const valueInWords = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

/** zod's int() bounds: not a rule anyone needs to read. */
const isSafeIntegerBound = (n: number) => Math.abs(n) >= Number.MAX_SAFE_INTEGER;

function numberRules(schema: JsonSchema, integer: boolean): string[] {
  const rules: string[] = [];
  if (integer) rules.push("a whole number");
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = schema;
  if (typeof exclusiveMinimum === "number" && !isSafeIntegerBound(exclusiveMinimum)) {
    rules.push(integer ? `at least ${exclusiveMinimum + 1}` : `greater than ${exclusiveMinimum}`);
  } else if (typeof minimum === "number" && !isSafeIntegerBound(minimum)) rules.push(`at least ${minimum}`);
  if (typeof exclusiveMaximum === "number" && !isSafeIntegerBound(exclusiveMaximum)) {
    rules.push(integer ? `at most ${exclusiveMaximum - 1}` : `less than ${exclusiveMaximum}`);
  } else if (typeof maximum === "number" && !isSafeIntegerBound(maximum)) rules.push(`at most ${maximum}`);
  if (typeof multipleOf === "number" && !(integer && multipleOf === 1)) rules.push(`a multiple of ${multipleOf}`);
  return rules;
}

function stringRules(document: OpenApiDocument, schema: JsonSchema): string[] {
  const rules: string[] = [];
  const formats = schema.format ? [schema.format] : [];
  const variants = variantsOf(document, schema);
  if (variants.length && variants.every(isFormatOnly)) formats.push(...variants.map((v) => v.format!));
  const spoken = formats.filter((f) => !SILENT_FORMATS.has(f)).map(formatInWords);
  if (spoken.length) rules.push(listInWords(spoken));
  const { minLength, maxLength } = schema;
  if (minLength !== undefined && minLength === maxLength) rules.push(`exactly ${plural(minLength, "character")}`);
  else {
    if (minLength) rules.push(`at least ${plural(minLength, "character")}`);
    if (maxLength !== undefined) rules.push(`at most ${plural(maxLength, "character")}`);
  }
  // A known format is the pattern's meaning; restating the regular expression would only add noise.
  if (schema.pattern && !formats.some((f) => FORMAT_WORDS[f])) rules.push(patternInWords(schema.pattern).words);
  return rules;
}

const prefixed = (prefix: string, rules: string[]) => rules.map((rule) => `${prefix}: ${rule}`);

/**
 * The validation rules of a schema in words ("at least 5 characters", "must not contain whitespace", "one of:
 * ssh, telnet", "a whole number", "an email address"), from its JSON-schema keywords. The type itself and
 * whether the field is required are said elsewhere; `null` being allowed is part of the type.
 */
export function rulesInWords(document: OpenApiDocument, schema: JsonSchema | undefined): string[] {
  const resolved = resolveSchema(document, schema);
  const variants = variantsOf(document, resolved);
  const union = variants.length > 0 && !variants.every(isFormatOnly);
  // A union without its own type: each variant's rules are said for that variant only, below.
  const types = union && resolved.type === undefined ? [] : typesOf(document, resolved);
  const rules: string[] = [];
  if (resolved.const !== undefined) rules.push(`exactly ${valueInWords(resolved.const)}`);
  if (resolved.enum) {
    const values = resolved.enum.filter((v) => v !== null);
    rules.push(
      values.length === 1 ? `exactly ${valueInWords(values[0])}` : `one of: ${values.map(valueInWords).join(", ")}`,
    );
  }
  if (types.includes("integer") || types.includes("number"))
    rules.push(...numberRules(resolved, !types.includes("number")));
  if (types.includes("string") || (!types.length && (resolved.format || resolved.pattern)))
    rules.push(...stringRules(document, resolved));
  if (types.includes("array")) {
    if (resolved.minItems) rules.push(`at least ${plural(resolved.minItems, "item")}`);
    if (resolved.maxItems !== undefined) rules.push(`at most ${plural(resolved.maxItems, "item")}`);
    if (resolved.uniqueItems) rules.push("no duplicate items");
    if (resolved.items) rules.push(...prefixed("each item", rulesInWords(document, resolved.items)));
  }
  if (types.includes("object")) {
    if (resolved.minProperties) rules.push(`at least ${plural(resolved.minProperties, "key")}`);
    if (resolved.maxProperties !== undefined) rules.push(`at most ${plural(resolved.maxProperties, "key")}`);
    if (resolved.propertyNames)
      rules.push(...prefixed("each key", rulesInWords(document, { type: "string", ...resolved.propertyNames })));
    if (typeof resolved.additionalProperties === "object") {
      rules.push(`each value: ${typeInWords(document, resolved.additionalProperties)}`);
      rules.push(...prefixed("each value", rulesInWords(document, resolved.additionalProperties)));
    }
  }
  if (union) {
    for (const variant of variants) {
      const type = typesOf(document, variant).find((t) => t !== "null") ?? "null";
      rules.push(...prefixed(`as ${/^[aeiou]/.test(type) ? "an" : "a"} ${type}`, rulesInWords(document, variant)));
    }
  }
  if (resolved.default !== undefined) rules.push(`default: ${valueInWords(resolved.default)}`);
  if (resolved.readOnly) rules.push("read-only");
  if (resolved.writeOnly) rules.push("write-only");
  if (resolved.deprecated) rules.push("deprecated");
  return rules;
}

import type { JsonSchema, OpenApiDocument } from "./openapi.ts";
import { patternInWords } from "./patterns.ts";
import { isFormatOnly, resolveSchema, typesOf, variantsOf } from "./schema.ts";
import { seeded, type Seeded } from "./seed.ts";

/** Nested objects deeper than this are left as `{}` in examples: a hint at shape, not a full instance. */
const MAX_DEPTH = 4;

const WORDS = [
  "amber",
  "birch",
  "cedar",
  "delta",
  "ember",
  "fjord",
  "granite",
  "harbor",
  "iris",
  "juniper",
  "kestrel",
  "lumen",
];

/** The last name in a field path: `devices[].device_name` -> `device_name`, `filter[device_ip]` -> `device_ip`. */
const leafName = (path: string) =>
  path
    .replace(/\[\]$/, "")
    .split(/[.[\]]+/)
    .filter(Boolean)
    .at(-1) ?? path;

function isoDateTime(random: Seeded): string {
  const minutes = random.int(0, 365 * 24 * 60 - 1);
  return new Date(Date.UTC(2024, 0, 1) + minutes * 60_000).toISOString().replace(".000Z", "Z");
}

const FORMAT_SAMPLES: Record<string, (random: Seeded, name: string) => string> = {
  email: (r, name) =>
    `${name.replace(/[^a-z0-9]+/gi, ".").replace(/^\.|\.$/g, "") || "user"}${r.int(1, 99)}@example.com`,
  uri: (r) => `https://example.com/${r.pick(WORDS)}`,
  url: (r) => `https://example.com/${r.pick(WORDS)}`,
  "uri-reference": (r) => `/${r.pick(WORDS)}`,
  "date-time": isoDateTime,
  date: (r) => isoDateTime(r).slice(0, 10),
  time: (r) => isoDateTime(r).slice(11, 19),
  duration: (r) => `PT${r.int(1, 59)}M`,
  ipv4: (r) => `192.0.2.${r.int(1, 254)}`,
  ipv6: (r) => `2001:db8::${r.int(1, 0xffff).toString(16)}`,
  hostname: (r) => `${r.pick(WORDS)}-${r.int(1, 99)}.example.net`,
  uuid: (r) => {
    const hex = Array.from({ length: 32 }, () => r.int(0, 15).toString(16)).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
  },
  binary: () => "<file contents>",
  byte: () => "ZXhhbXBsZQ==",
};

/** A string that hints at what the field holds, from its name, when the schema says nothing more. */
function stringByName(name: string, random: Seeded): string {
  const n = name.toLowerCase();
  if (/(^|_)(ip|address|host|hostname)$/.test(n)) return FORMAT_SAMPLES.ipv4!(random, n);
  // Query values arrive as text even when they name numbers or flags (filter[device_vendor_id]=3).
  if (/(^|_)ids?$/.test(n)) return String(random.int(1, 99));
  if (/^(enabled|disabled|active|dry_run|latest|builtin)$|^(is|has)_/.test(n)) return random.pick(["true", "false"]);
  if (n.includes("email")) return FORMAT_SAMPLES.email!(random, "user");
  if (/password|secret|passphrase|community|token/.test(n))
    return `${random.pick(WORDS)}-${random.int(1000, 9999)}-pass`;
  if (/(url|uri|link)$/.test(n)) return FORMAT_SAMPLES.uri!(random, n);
  // Time bounds too: date_from, created_after, started_before.
  if (/(_at|date|time)$|^(date|created|started|finished)_(from|to|after|before)$/.test(n)) return isoDateTime(random);
  if (/colou?r/.test(n)) return `#${random.int(0, 0xffffff).toString(16).padStart(6, "0")}`;
  if (/description|notes?$|comment/.test(n)) return `Example ${n.replace(/_/g, " ")} ${random.int(1, 99)}`;
  return `${n.replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || random.pick(WORDS)}-${random.int(1, 999)}`;
}

function fitLength(text: string, schema: JsonSchema, random: Seeded): string {
  let fitted = text;
  while (schema.minLength !== undefined && fitted.length < schema.minLength) fitted += random.pick(WORDS);
  if (schema.maxLength !== undefined && fitted.length > schema.maxLength) fitted = fitted.slice(0, schema.maxLength);
  return fitted;
}

function fakeString(document: OpenApiDocument, schema: JsonSchema, name: string, random: Seeded): string {
  const variants = variantsOf(document, schema);
  const format = schema.format ?? (variants.length && variants.every(isFormatOnly) ? variants[0]!.format : undefined);
  const byFormat = format ? FORMAT_SAMPLES[format] : undefined;
  if (byFormat) return byFormat(random, name);
  const byPattern = schema.pattern ? patternInWords(schema.pattern).sample : undefined;
  // A generated pattern sample already has a length the pattern allows.
  if (byPattern) return byPattern(random);
  return fitLength(stringByName(name, random), schema, random);
}

function fakeNumber(schema: JsonSchema, name: string, random: Seeded, integer: boolean): number {
  const low =
    typeof schema.exclusiveMinimum === "number"
      ? schema.exclusiveMinimum + 1
      : (schema.minimum ?? (/(^|_)id$/.test(name) ? 1 : 0));
  const high = typeof schema.exclusiveMaximum === "number" ? schema.exclusiveMaximum - 1 : (schema.maximum ?? low + 99);
  const value = random.int(Math.ceil(low), Math.max(Math.ceil(low), Math.floor(Math.min(high, low + 999))));
  return integer ? value : value + 0.5 <= high ? value + 0.5 : value;
}

/** The schema's own example, if it gives one. */
export function ownExample(schema: JsonSchema): { value: unknown } | undefined {
  if (schema.example !== undefined) return { value: schema.example };
  if (schema.examples?.length) return { value: schema.examples[0] };
  return undefined;
}

/**
 * An example value for a field: the schema's own `example` when it has one, else fake data that hints at the
 * shape (an address for `device_ip`, a date for `*_at`, a value inside min/max, the first fitting enum value),
 * generated from the field's path so two builds print the same value.
 */
export function exampleValue(
  document: OpenApiDocument,
  schema: JsonSchema | undefined,
  path: string,
  depth = 0,
): unknown {
  const resolved = resolveSchema(document, schema);
  const own = ownExample(resolved);
  if (own) return own.value;
  const random = seeded(path);
  const name = leafName(path);
  if (resolved.const !== undefined) return resolved.const;
  if (resolved.default !== undefined) return resolved.default;
  const choices = resolved.enum?.filter((v) => v !== null);
  if (choices?.length) return random.pick(choices);
  const types = typesOf(document, resolved).filter((t) => t !== "null");
  const variants = variantsOf(document, resolved);
  if (!resolved.type && variants.length && !variants.every(isFormatOnly)) {
    const variant = variants.find((v) => !typesOf(document, v).every((t) => t === "null")) ?? variants[0]!;
    return exampleValue(document, variant, path, depth);
  }
  switch (types[0]) {
    case "string":
      return fakeString(document, resolved, name, random);
    case "integer":
      return fakeNumber(resolved, name, random, true);
    case "number":
      return fakeNumber(resolved, name, random, false);
    case "boolean":
      return random.int(0, 1) === 1;
    case "array": {
      if (depth >= MAX_DEPTH) return [];
      const count = Math.min(Math.max(resolved.minItems ?? 1, 1), 3);
      return Array.from({ length: count }, (_, i) =>
        exampleValue(document, resolved.items, count === 1 ? `${path}[]` : `${path}[${i}]`, depth + 1),
      );
    }
    case "object":
      return objectExample(document, resolved, path, depth);
    case undefined:
      return typesOf(document, resolved).includes("null") ? null : stringByName(name, random);
    default:
      return null;
  }
}

function objectExample(
  document: OpenApiDocument,
  schema: JsonSchema,
  path: string,
  depth: number,
): Record<string, unknown> {
  if (depth >= MAX_DEPTH) return {};
  const example: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    example[key] = exampleValue(document, property, path ? `${path}.${key}` : key, depth + 1);
  }
  if (!schema.properties && typeof schema.additionalProperties === "object") {
    example.key = exampleValue(document, schema.additionalProperties, `${path}.key`, depth + 1);
  }
  return example;
}

import { z } from "zod";
import { describe, expect, it } from "vitest";
import { API_VERSIONS, openApiDocument } from "../api/versions.ts";
import { DeviceInput } from "../../modules/devices/schemas.ts";
import { exampleValue } from "./examples.ts";
import {
  HTTP_METHODS,
  resolveRef,
  type JsonSchema,
  type OpenApiDocument,
  type ParameterObject,
  type RequestBodyObject,
} from "./openapi.ts";
import { patternInWords } from "./patterns.ts";
import { describeApi } from "./reference.ts";
import { rulesInWords } from "./rules.ts";
import { typeInWords } from "./schema.ts";
import { seeded } from "./seed.ts";

const doc = (schemas: Record<string, JsonSchema> = {}): OpenApiDocument => ({
  openapi: "3.1.0",
  info: { title: "t", version: "1.0.0" },
  paths: {},
  components: { schemas },
});
const rules = (schema: JsonSchema, document = doc()) => rulesInWords(document, schema);

describe("rules in words", () => {
  it("says string lengths, whitespace and enums as a reader would", () => {
    expect(rules({ type: "string", minLength: 5, maxLength: 255, pattern: "^\\S+$" })).toEqual([
      "at least 5 characters",
      "at most 255 characters",
      "must not contain whitespace",
    ]);
    expect(rules({ type: "string", enum: ["ssh", "telnet"] })).toEqual(["one of: ssh, telnet"]);
    expect(rules({ type: ["string", "null"], enum: ["ssh", "telnet", null] })).toEqual(["one of: ssh, telnet"]);
    expect(rules({ type: "string", minLength: 1, maxLength: 1 })).toEqual(["exactly 1 character"]);
  });

  it("says numbers as whole numbers with bounds, turning exclusive integer bounds into inclusive ones", () => {
    expect(rules({ type: "integer", minimum: 1, maximum: 255 })).toEqual([
      "a whole number",
      "at least 1",
      "at most 255",
    ]);
    expect(rules({ type: "integer", exclusiveMinimum: 0 })).toEqual(["a whole number", "at least 1"]);
    expect(rules({ type: "number", exclusiveMinimum: 0, maximum: 1 })).toEqual(["greater than 0", "at most 1"]);
    expect(rules({ type: "integer", minimum: -9007199254740991, maximum: 9007199254740991 })).toEqual([
      "a whole number",
    ]);
  });

  it("names formats, and does not restate a pattern a known format already implies", () => {
    expect(rules({ type: "string", format: "email", pattern: "^[^@]+@.+$" })).toEqual(["an email address"]);
    expect(rules({ type: "string", anyOf: [{ format: "ipv4" }, { format: "ipv6" }, { format: "hostname" }] })).toEqual([
      "an IPv4 address, an IPv6 address or a hostname",
    ]);
    expect(rules({ type: "string", format: "x-custom" })).toEqual(["format: x-custom"]);
  });

  it("reads simple patterns and falls back to the expression itself", () => {
    expect(patternInWords("^[A-Za-z0-9._-]{3,64}$").words).toBe("made of 3 to 64 letters, digits, '.', '_' or '-'");
    expect(patternInWords("^#[0-9a-fA-F]{6}$").words).toBe("'#' then 6 hexadecimal digits");
    expect(patternInWords("^[^\\s@]+@[^\\s@]+$").words).toBe("an email address");
    expect(patternInWords("^(ssh|telnet)+$").words).toBe("must match the regular expression ^(ssh|telnet)+$");
    expect(patternInWords("ab[c]").words).toBe("must match the regular expression ab[c]");
  });

  it("describes arrays, their items, objects' keys and values, defaults and nullability", () => {
    expect(
      rules({ type: "array", items: { type: "string", maxLength: 64 }, minItems: 1, maxItems: 100, uniqueItems: true }),
    ).toEqual(["at least 1 item", "at most 100 items", "no duplicate items", "each item: at most 64 characters"]);
    expect(
      rules({
        type: "object",
        propertyNames: { pattern: "^[a-z]{1,8}$" },
        additionalProperties: { anyOf: [{ type: "string", maxLength: 10 }, { type: "null" }] },
      }),
    ).toEqual([
      "each key: made of 1 to 8 lowercase letters",
      "each value: string or null",
      "each value: as a string: at most 10 characters",
    ]);
    expect(rules({ type: "integer", default: 25 })).toEqual(["a whole number", "default: 25"]);
    expect(typeInWords(doc(), { type: ["integer", "null"] })).toBe("integer or null");
    expect(typeInWords(doc(), { type: "array", items: { type: ["string", "null"] } })).toBe(
      "array of (string or null)",
    );
    const cron: JsonSchema = {
      anyOf: [
        { type: "string", maxLength: 200 },
        { type: "array", items: { anyOf: [{ type: "string", maxLength: 50 }, { type: "integer" }] } },
      ],
    };
    expect(typeInWords(doc(), cron)).toBe("string or array of (string or integer)");
    expect(rules(cron)).toEqual([
      "as a string: at most 200 characters",
      "as an array: each item: as a string: at most 50 characters",
      "as an array: each item: as an integer: a whole number",
    ]);
  });

  it("follows $ref and allOf to the rules of the component", () => {
    const document = doc({
      Name: { type: "string", minLength: 5 },
      Base: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
    });
    expect(rules({ $ref: "#/components/schemas/Name" }, document)).toEqual(["at least 5 characters"]);
    expect(
      typeInWords(document, {
        allOf: [{ $ref: "#/components/schemas/Base" }, { type: "object", properties: { id: { type: "integer" } } }],
      }),
    ).toBe("object");
  });
});

describe("example values", () => {
  it("prefer the schema's own example", () => {
    expect(exampleValue(doc(), { type: "string", example: "core-rtr-01" }, "device_name")).toBe("core-rtr-01");
  });

  it("are the same for the same field every time, without using the clock or Math.random", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: {
        device_ip: { type: "string" },
        created_at: { type: "string" },
        n: { type: "integer", minimum: 3, maximum: 9 },
      },
    };
    const first = exampleValue(doc(), schema, "");
    expect(exampleValue(doc(), schema, "")).toEqual(first);
    expect(first).toMatchObject({
      device_ip: expect.stringMatching(/^192\.0\.2\.\d+$/),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(seeded("a").int(0, 1e9)).toBe(seeded("a").int(0, 1e9));
  });

  it("match the patterns they are generated from", () => {
    for (const pattern of [
      "^[A-Za-z0-9._-]{3,64}$",
      "^#[0-9a-fA-F]{6}$",
      "^SHA256:[A-Za-z0-9+/]{43}$",
      "^[a-z]+-[0-9]{2,4}$",
      "^\\d{4}$",
    ]) {
      const sample = patternInWords(pattern).sample!;
      for (const seed of ["a", "b", "device_name"]) expect(sample(seeded(seed)), pattern).toMatch(new RegExp(pattern));
    }
  });
});

/**
 * Every example in the generated description is checked against its own schema by zod's JSON-schema reader,
 * which shares no code with the renderer: fake values must fit the rules printed next to them.
 */
describe.each(API_VERSIONS)("every %s example", (version) => {
  const document = JSON.parse(JSON.stringify(openApiDocument(version, "http://127.0.0.1:3000"))) as OpenApiDocument;
  // zod reads local references only from $defs.
  const validator = (schema: JsonSchema | undefined) =>
    z.fromJSONSchema(
      JSON.parse(
        JSON.stringify({ ...schema, $defs: document.components?.schemas }).replaceAll(
          "#/components/schemas/",
          "#/$defs/",
        ),
      ),
    );
  const reference = describeApi(document);
  const endpoint = (method: string, path: string) =>
    reference.groups.flatMap((g) => g.endpoints).find((e) => e.method === method.toUpperCase() && e.path === path)!;

  it("fits its parameter's schema", () => {
    let checked = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of HTTP_METHODS) {
        const operation = item[method];
        for (const parameter of (operation?.parameters ?? []).map((p) => resolveRef<ParameterObject>(document, p))) {
          const doc = endpoint(method, path);
          const field = [...doc.pathParameters, ...doc.queryParameters, ...doc.headerParameters].find(
            (f) => f.name === parameter.name,
          )!;
          const result = validator(parameter.schema).safeParse(field.example);
          expect(
            result.success,
            `${method} ${path} ${parameter.name}=${JSON.stringify(field.example)}: ${result.error?.message}`,
          ).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it("of a JSON request body fits the body's schema", () => {
    let checked = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of HTTP_METHODS) {
        const body = item[method]?.requestBody
          ? resolveRef<RequestBodyObject>(document, item[method]!.requestBody!)
          : undefined;
        const schema = body?.content?.["application/json"]?.schema;
        if (!schema) continue;
        const example = endpoint(method, path).body!.contents.find(
          (c) => c.contentType === "application/json",
        )!.example;
        const result = validator(schema).safeParse(example);
        expect(result.success, `${method} ${path}: ${result.error?.message}`).toBe(true);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(5);
  });

  it("of the device create body is accepted by the API's own validation", () => {
    const create = endpoint("POST", `/api/${version}/devices`).body!.contents[0]!;
    expect(DeviceInput.safeParse(create.example).error).toBeUndefined();
  });
});

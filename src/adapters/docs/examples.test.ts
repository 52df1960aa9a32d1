import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { API_VERSIONS, openApiDocument } from "../api/versions.ts";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { exampleValue, ownExample } from "./examples.ts";
import { resolveSchema } from "./schema.ts";
import {
  resolveRef,
  type JsonSchema,
  type OpenApiDocument,
  type ParameterObject,
  type RequestBodyObject,
} from "./openapi.ts";

/** The document as the build caches it. */
const documentOf = (version: (typeof API_VERSIONS)[number]) =>
  JSON.parse(JSON.stringify(openApiDocument(version, "http://netkeep.test"))) as OpenApiDocument;

type Example = {
  where: string;
  method: string;
  path: string;
  parameter?: ParameterObject;
  schema: JsonSchema;
  value: unknown;
};

/** Every example the API description shows, computed as reference.ts does: parameters and request bodies. */
function examplesOf(document: OpenApiDocument): Example[] {
  const examples: Example[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === "parameters" || !op || typeof op !== "object") continue;
      const operation = op as { parameters?: ParameterObject[]; requestBody?: RequestBodyObject };
      for (const raw of operation.parameters ?? []) {
        const parameter = resolveRef<ParameterObject>(document, raw);
        const schema = resolveSchema(document, parameter.schema);
        const value =
          parameter.example !== undefined ? parameter.example : exampleValue(document, schema, parameter.name);
        examples.push({
          where: `${method.toUpperCase()} ${path} ${parameter.in} ${parameter.name}`,
          method,
          path,
          parameter,
          schema: parameter.schema ?? {},
          value,
        });
      }
      const body = operation.requestBody ? resolveRef<RequestBodyObject>(document, operation.requestBody) : undefined;
      for (const [type, media] of Object.entries(body?.content ?? {})) {
        if (type !== "application/json") continue;
        const schema = resolveSchema(document, media.schema);
        const value =
          media.example !== undefined
            ? media.example
            : (ownExample(schema)?.value ?? exampleValue(document, schema, ""));
        examples.push({
          where: `${method.toUpperCase()} ${path} body`,
          method,
          path,
          schema: media.schema ?? {},
          value,
        });
      }
    }
  }
  return examples;
}

const refsToDefs = (value: unknown) =>
  JSON.parse(JSON.stringify(value).replaceAll("#/components/schemas/", "#/$defs/"));

describe.each(API_VERSIONS)("the %s examples", (version) => {
  const document = documentOf(version);
  const examples = examplesOf(document);
  const defs = refsToDefs(document.components?.schemas ?? {});

  it("are each valid for the schema of their field", () => {
    expect(examples.length).toBeGreaterThan(100);
    const invalid: string[] = [];
    for (const example of examples) {
      const schema = z.fromJSONSchema({ ...refsToDefs(example.schema), $defs: defs } as Parameters<
        typeof z.fromJSONSchema
      >[0]);
      const result = schema.safeParse(example.value);
      if (!result.success)
        invalid.push(
          `${example.where} = ${JSON.stringify(example.value).slice(0, 120)}: ${result.error.issues[0]!.path.join(".")} ${result.error.issues[0]!.message}`,
        );
    }
    expect(invalid).toEqual([]);
  });

  describe("sent to the API", () => {
    let t: TestContext;
    let token: string;
    beforeAll(async () => {
      t = await createTestContext();
      token = await t.token();
    });
    afterAll(() => t.close());

    // The schemas cannot say everything the server checks (which names fields= and sort= take, which values a
    // filter knows); so each query example of a list is also sent, and must not be what the 422 names.
    it("are query values the server takes", async () => {
      const queries = examples.filter(
        (e) => e.method === "get" && e.parameter?.in === "query" && !e.path.includes("{"),
      );
      expect(queries.length).toBeGreaterThan(100);
      const refused: string[] = [];
      for (const example of queries) {
        const required = examples.filter(
          (e) =>
            e.method === "get" &&
            e.path === example.path &&
            e.parameter?.in === "query" &&
            e.parameter.required &&
            e !== example,
        );
        // A prefix filter is documented as filter[custom.<key>]: the example goes to a real key.
        const query = new URLSearchParams(
          [...required, example].map((e) => [e.parameter!.name.replace("<key>", "site"), String(e.value)]),
        );
        const res = await t.request(`${example.path}?${query}`, { token });
        if (res.status !== 422) continue;
        const body = await res.json();
        const named = Object.keys(body.errors ?? {});
        if (named.includes(example.parameter!.name) || named.length === 0)
          refused.push(`${example.where} = ${String(example.value)}: ${body.message}`);
      }
      expect(refused).toEqual([]);
    });
  });
});

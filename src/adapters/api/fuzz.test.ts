/**
 * Requests built from the API description, valid-looking and not, against every documented route: the answer
 * must never be a 5xx or a hang, and (checked by the test context against the description) must be one the
 * route documents. Deterministic: the same seed gives the same requests, and a failure names the request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { answerWithin, seededChoice } from "../../../test/helpers/fuzz.ts";
import { API_VERSIONS, openApiDocument } from "./versions.ts";

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  nullable?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  $ref?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  example?: unknown;
  default?: unknown;
  additionalProperties?: boolean | Schema;
};
type Parameter = { name: string; in: string; required?: boolean; schema?: Schema };
type Operation = {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
};
type Doc = { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
/**
 * Routes that reach past the process (a test mail to the configured server, which the fuzzer may just have set
 * to a host on the internet): not fuzzed. Each name is checked against the document, so a rename cannot quietly
 * let the fuzzer send traffic off this machine.
 */
const LEAVES_THE_PROCESS = new Set(["sendTestMail"]);
/** Parameters that ask the route to wait (a run's `wait`, up to a minute, for a collector): sent as 0. */
const WAITS = new Set(["wait"]);
const REQUESTS_PER_ROUTE = Number(process.env.FUZZ_REQUESTS ?? 6);
const SEED = Number(process.env.FUZZ_SEED ?? 26);

const ODD_STRINGS = [
  "",
  " ",
  "0",
  "-1",
  "1e309",
  "null",
  "true",
  "a".repeat(5000),
  "\u0000",
  "%",
  "%00",
  "../..",
  "ü∂ß😀",
  "<script>",
  "' or 1=1 --",
  "[]",
  "{}",
  "9".repeat(30),
];
const ODD_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 53,
  -(2 ** 63),
  1e308,
  "",
  "x",
  [],
  {},
  [1, "a"],
  { a: { b: [] } },
  ...ODD_STRINGS,
];

function fuzzer(doc: Doc, seed: number) {
  const { rnd, pick } = seededChoice(seed);
  const resolve = (s: Schema | undefined): Schema => {
    let out = s ?? {};
    for (let i = 0; out.$ref && i < 10; i++) out = doc.components?.schemas?.[out.$ref.split("/").pop()!] ?? {};
    return out;
  };

  /** A value the schema allows, mostly. */
  function valid(schemaIn: Schema | undefined, depth = 0): unknown {
    const s = resolve(schemaIn);
    if (s.enum?.length) return pick(s.enum);
    const options = s.anyOf ?? s.oneOf;
    if (options?.length) return valid(pick(options), depth + 1);
    if (s.allOf?.length)
      return Object.assign(
        {},
        ...s.allOf.map((part) => valid(part, depth + 1)).filter((v) => v && typeof v === "object"),
      );
    if (s.example !== undefined && rnd() < 0.3) return s.example;
    const type = Array.isArray(s.type) ? pick(s.type) : (s.type ?? (s.properties ? "object" : "string"));
    switch (type) {
      case "integer":
        return Math.floor((s.minimum ?? 1) + rnd() * Math.min(100, (s.maximum ?? 100) - (s.minimum ?? 1) + 1));
      case "number":
        return (s.minimum ?? 0) + rnd() * 10;
      case "boolean":
        return rnd() < 0.5;
      case "null":
        return null;
      case "array":
        return depth > 4 ? [] : Array.from({ length: Math.floor(rnd() * 3) }, () => valid(s.items, depth + 1));
      case "object": {
        const out: Record<string, unknown> = {};
        for (const [key, prop] of Object.entries(s.properties ?? {})) {
          if (depth < 5 && (s.required?.includes(key) || rnd() < 0.5)) out[key] = valid(prop, depth + 1);
        }
        return out;
      }
      default: {
        if (s.format === "date-time") return new Date(Date.UTC(2026, 0, 1 + Math.floor(rnd() * 300))).toISOString();
        if (s.format === "date") return "2026-03-04";
        if (s.format === "email") return `user${Math.floor(rnd() * 1e6)}@example.test`;
        if (s.format === "uri" || s.format === "url") return "http://127.0.0.1:9/hook";
        const length = Math.max(s.minLength ?? 1, Math.min(s.maxLength ?? 12, 12));
        return (
          Array.from({ length }, () => pick([..."abcxyz019-_. "]))
            .join("")
            .trim() || "a"
        );
      }
    }
  }

  /** The same with one value somewhere swapped for something odd. */
  function mutated(value: unknown, depth = 0): unknown {
    if (rnd() < 0.25 || depth > 4 || value === null || typeof value !== "object") return pick(ODD_VALUES);
    if (Array.isArray(value)) {
      if (!value.length || rnd() < 0.2) return [...value, pick(ODD_VALUES)];
      const i = Math.floor(rnd() * value.length);
      return value.map((v, k) => (k === i ? mutated(v, depth + 1) : v));
    }
    const keys = Object.keys(value);
    if (!keys.length || rnd() < 0.2)
      return { ...value, [pick(["extra", "id", "__proto__", "constructor", ""])]: pick(ODD_VALUES) };
    const key = pick(keys);
    return { ...value, [key]: mutated((value as Record<string, unknown>)[key], depth + 1) };
  }

  function request(path: string, op: Operation): { url: string; body?: unknown; rawBody?: string; label: string } {
    const params = op.parameters ?? [];
    let url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const p = params.find((x) => x.in === "path" && x.name === name);
      return encodeURIComponent(
        String(rnd() < 0.6 ? (rnd() < 0.7 ? pick([1, 2, 3]) : valid(p?.schema)) : pick(ODD_STRINGS)),
      );
    });
    const query = new URLSearchParams();
    for (const p of params.filter((x) => x.in === "query")) {
      if (!p.required && rnd() < 0.5) continue;
      const value = WAITS.has(p.name) ? 0 : rnd() < 0.6 ? valid(p.schema) : pick(ODD_VALUES);
      for (const v of Array.isArray(value) ? value : [value])
        query.append(p.name, typeof v === "object" ? JSON.stringify(v) : String(v));
    }
    if (rnd() < 0.2)
      query.append(pick(["filter[nope]", "sort", "page", "per_page", "filter[name]"]), pick(ODD_STRINGS));
    if ([...query].length) url += `?${query}`;
    const schema = op.requestBody?.content?.["application/json"]?.schema;
    if (!schema) return { url, label: url };
    const roll = rnd();
    if (roll < 0.1)
      return {
        url,
        rawBody: pick(["{", "[1,", '"unterminated', '{"a":}', "nul", "{}}"]),
        label: `${url} (malformed JSON)`,
      };
    const body = roll < 0.45 ? valid(schema) : roll < 0.9 ? mutated(valid(schema)) : pick(ODD_VALUES);
    return { url, body, label: `${url} ${JSON.stringify(body)?.slice(0, 300)}` };
  }

  return { request };
}

let t: TestContext;
let token: string;
beforeAll(async () => {
  t = await createTestContext();
  token = await t.token();
});
afterAll(() => t.close());

describe("the API under fuzzing", () => {
  it("leaves out only routes the documents have", () => {
    const operationIds = new Set(
      API_VERSIONS.flatMap((version) =>
        Object.values((openApiDocument(version, "http://netkeep.test") as unknown as Doc).paths).flatMap((item) =>
          METHODS.flatMap((m) => (item[m] ? [item[m]!.operationId] : [])),
        ),
      ),
    );
    expect([...LEAVES_THE_PROCESS].filter((id) => !operationIds.has(id))).toEqual([]);
  });

  for (const version of API_VERSIONS) {
    it(`answers every documented ${version} route with a documented 2xx-4xx, never a 5xx or a hang`, async () => {
      const doc = openApiDocument(version, "http://netkeep.test") as unknown as Doc;
      const { request } = fuzzer(doc, version === "v1" ? SEED : SEED * 7 + 1);
      const failures: string[] = [];
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const method of METHODS) {
          const op = item[method];
          if (!op || LEAVES_THE_PROCESS.has(op.operationId)) continue;
          for (let n = 0; n < REQUESTS_PER_ROUTE; n++) {
            const r = request(path, op);
            const what = `${method.toUpperCase()} ${r.label}`;
            try {
              const res = await answerWithin(
                t.request(r.url, { method: method.toUpperCase(), token, body: r.body, rawBody: r.rawBody }),
              );
              const text = await res.text();
              if (res.status >= 500) failures.push(`${what}: ${res.status} ${text.slice(0, 300)}`);
              else if (res.status >= 400 && !/"message":"[^"]/.test(text))
                failures.push(`${what}: ${res.status} without a message: ${text.slice(0, 200)}`);
            } catch (e) {
              failures.push(`${what}: ${(e as Error).message.slice(0, 400)}`);
            }
          }
        }
      }
      expect(failures).toEqual([]);
    }, 300_000);
  }
});

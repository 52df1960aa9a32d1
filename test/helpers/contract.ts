import { inject } from "vitest";
import { z } from "zod";
import type { JsonSchema, OpenApiDocument, OperationObject } from "../../src/adapters/docs/openapi.ts";

/**
 * Holds every API answer the tests provoke to the generated API description: the status must be one the
 * operation documents, the content type one it documents for that status, and a JSON body must validate
 * against the documented schema (the JSON Schema of the generated document, not the zod schema it came from,
 * so a generator quirk that makes the two disagree is caught). The documents are built once per run
 * (contract-setup.ts); each schema is compiled the first time an answer needs it.
 */

type Operation = { pattern: RegExp; params: number; method: string; path: string; op: OperationObject };

const refsToDefs = (value: unknown) =>
  JSON.parse(JSON.stringify(value).replaceAll("#/components/schemas/", "#/$defs/"));

class Contract {
  private readonly operations: Operation[];
  private readonly defs: unknown;
  private readonly compiled = new Map<object, z.ZodType>();

  constructor(document: OpenApiDocument) {
    this.defs = refsToDefs(document.components?.schemas ?? {});
    this.operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => method !== "parameters")
        .map(([method, op]) => ({
          pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`),
          params: (path.match(/\{/g) ?? []).length,
          method: method.toUpperCase(),
          path,
          op: op as OperationObject,
        })),
    );
  }

  /** The operation a request reaches: a static path wins over a parameter, as in the router. */
  find(method: string, pathname: string): Operation | undefined {
    return this.operations
      .filter((o) => o.method === method && o.pattern.test(pathname))
      .sort((a, b) => a.params - b.params)[0];
  }

  schema(media: { schema?: JsonSchema }): z.ZodType {
    let schema = this.compiled.get(media);
    if (!schema) {
      schema = z.fromJSONSchema({ ...refsToDefs(media.schema ?? {}), $defs: this.defs } as Parameters<
        typeof z.fromJSONSchema
      >[0]);
      this.compiled.set(media, schema);
    }
    return schema;
  }
}

let contracts: Map<string, Contract> | undefined;
const contractFor = (version: string) => {
  contracts ??= new Map(Object.entries(inject("apiDocuments")).map(([v, doc]) => [v, new Contract(doc)]));
  return contracts.get(version);
};

/** Throws, naming the operation and what differs, when an /api answer is not the documented one. */
export async function checkAgainstContract(method: string, url: URL, response: Response): Promise<void> {
  const version = /^\/api\/(v\d+)\//.exec(url.pathname)?.[1];
  const contract = version ? contractFor(version) : undefined;
  const operation = contract?.find(method, url.pathname);
  if (!contract || !operation) return; // not an operation: the 404 and 405 answers of the router
  const where = `${method} ${operation.path} (${url.pathname}${url.search})`;
  const documented = operation.op.responses?.[String(response.status)] as
    | { content?: Record<string, { schema?: JsonSchema }> }
    | undefined;
  if (!documented) {
    throw new Error(
      `API contract: ${where} answered ${response.status}, which its description does not list (${Object.keys(operation.op.responses ?? {}).join(", ")}): ${await response.clone().text()}`,
    );
  }
  if (!documented.content || method === "HEAD" || response.body === null) return;
  const mediaType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const media = documented.content[mediaType];
  if (!media)
    throw new Error(
      `API contract: ${where} answered ${response.status} as ${mediaType || "no content type"}; its description says ${Object.keys(documented.content).join(" or ")}`,
    );
  // fields= trims each record to the fields asked for; the description documents the whole record.
  if (mediaType !== "application/json" || url.searchParams.has("fields")) return;
  const body = await response.clone().json();
  const result = contract.schema(media).safeParse(body);
  if (!result.success) {
    const problems = result.error.issues.slice(0, 5).map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`);
    throw new Error(
      `API contract: ${where} answered ${response.status} with a body its documented schema refuses: ${problems.join("; ")}\n${JSON.stringify(body).slice(0, 500)}`,
    );
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    apiDocuments: Record<string, OpenApiDocument>;
  }
}

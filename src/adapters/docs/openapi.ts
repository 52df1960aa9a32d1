/**
 * The part of an OpenAPI 3.1 document the API description reads. The renderer works on plain JSON (the cached
 * `openapi.json` is read back from disk), so these types describe what it looks at, not what produced it.
 */
export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
  description?: string;
  readOnly?: boolean;
  writeOnly?: boolean;
  deprecated?: boolean;
};

export type Reference = { $ref: string };

export type ParameterObject = {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  description?: string;
  deprecated?: boolean;
  schema?: JsonSchema;
  example?: unknown;
};

export type MediaTypeObject = { schema?: JsonSchema; example?: unknown };

export type RequestBodyObject = { required?: boolean; description?: string; content?: Record<string, MediaTypeObject> };

export type ResponseObject = { description?: string };

export type OperationObject = {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  deprecated?: boolean;
  parameters?: (ParameterObject | Reference)[];
  requestBody?: RequestBodyObject | Reference;
  responses?: Record<string, ResponseObject | Reference>;
  "x-ability"?: string;
};

export const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export type PathItemObject = { parameters?: (ParameterObject | Reference)[] } & Partial<
  Record<HttpMethod, OperationObject>
>;

export type SecuritySchemeObject = { type: string; in?: string; name?: string; scheme?: string; description?: string };

export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: { url: string }[];
  paths: Record<string, PathItemObject>;
  components?: {
    schemas?: Record<string, JsonSchema>;
    parameters?: Record<string, ParameterObject>;
    requestBodies?: Record<string, RequestBodyObject>;
    responses?: Record<string, ResponseObject>;
    securitySchemes?: Record<string, SecuritySchemeObject>;
  };
  security?: Record<string, string[]>[];
};

/** A document that cannot be rendered; the message says which part is wrong. */
export class OpenApiDocumentError extends Error {}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Checks that a parsed JSON value is the OpenAPI 3.x document of the given API version (`v1` -> info.version
 * `1.x.y`), so a stale or misplaced cache fails with a clear message instead of rendering the wrong API.
 */
export function asOpenApiDocument(value: unknown, version: string): OpenApiDocument {
  if (!isObject(value)) throw new OpenApiDocumentError("is not an OpenAPI document (not a JSON object)");
  if (typeof value.openapi !== "string" || !value.openapi.startsWith("3.")) {
    throw new OpenApiDocumentError('is not an OpenAPI 3 document (no "openapi": "3.x" field)');
  }
  if (!isObject(value.info) || typeof value.info.version !== "string" || typeof value.info.title !== "string") {
    throw new OpenApiDocumentError("has no info.title and info.version");
  }
  if (!isObject(value.paths)) throw new OpenApiDocumentError("has no paths");
  const major = version.replace(/^v/, "");
  if (value.info.version.split(".")[0] !== major) {
    throw new OpenApiDocumentError(`describes API version ${value.info.version}, not ${version}`);
  }
  return value as OpenApiDocument;
}

/** Follows a local `#/components/<kind>/<name>` reference; anything else is left as it is. */
export function resolveRef<T>(document: OpenApiDocument, value: T | Reference): T {
  if (!isObject(value) || typeof value.$ref !== "string") return value as T;
  const match = /^#\/components\/([^/]+)\/(.+)$/.exec(value.$ref);
  const target = match
    ? (document.components as Record<string, Record<string, unknown>> | undefined)?.[match[1]!]?.[
        decodeURIComponent(match[2]!)
      ]
    : undefined;
  if (target === undefined) throw new OpenApiDocumentError(`refers to ${value.$ref}, which it does not define`);
  return target as T;
}

/** The component name a `$ref` points at, e.g. `DeviceInput`. */
export const refName = (ref: string) => ref.slice(ref.lastIndexOf("/") + 1);

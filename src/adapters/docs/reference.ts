import { exampleValue, ownExample } from "./examples.ts";
import {
  HTTP_METHODS,
  resolveRef,
  type JsonSchema,
  type OpenApiDocument,
  type OperationObject,
  type ParameterObject,
  type RequestBodyObject,
  type ResponseObject,
  type SecuritySchemeObject,
} from "./openapi.ts";
import { rulesInWords } from "./rules.ts";
import { objectWithFields, resolveSchema, typeInWords } from "./schema.ts";

/**
 * The API as a reader needs it, built from an OpenAPI document: groups of endpoints, each with its inputs
 * (fields with type, required flag, rules in words and an example) and its status codes. The Markdown file and
 * the web interface's reference both render this, so they say the same thing.
 */
export type FieldDoc = {
  /** `device_name`; nested fields read `scope.tag_ids`, array items `devices[].device_name`. */
  name: string;
  type: string;
  required: boolean;
  /** Required unless one of these is sent instead (an object's `anyOf` of `required` lists). */
  requiredUnless?: string[];
  rules: string[];
  description?: string;
  example: unknown;
};

export type BodyContentDoc = {
  contentType: string;
  /** Set when the body is an object: its fields, nested ones included. */
  fields?: FieldDoc[];
  /** Set when the body is a single value (a CSV text, a file). */
  value?: FieldDoc;
  example: unknown;
};

export type BodyDoc = { required: boolean; description?: string; contents: BodyContentDoc[] };

export type ResponseDoc = { status: string; description: string };

export type EndpointDoc = {
  method: string;
  path: string;
  operationId?: string;
  summary: string;
  description?: string;
  deprecated: boolean;
  /** The ability the token needs (`x-ability`). */
  ability?: string;
  pathParameters: FieldDoc[];
  queryParameters: FieldDoc[];
  headerParameters: FieldDoc[];
  body?: BodyDoc;
  responses: ResponseDoc[];
};

export type GroupDoc = { name: string; endpoints: EndpointDoc[] };

export type AuthSchemeDoc = { name: string; type: string; in?: string; parameter?: string; description?: string };

export type ApiReference = {
  title: string;
  version: string;
  openapi: string;
  description?: string;
  baseUrl?: string;
  authSchemes: AuthSchemeDoc[];
  groups: GroupDoc[];
};

/** How deep nested body fields are listed (`a.b.c.d`); deeper structure is left to the example. */
const MAX_FIELD_DEPTH = 4;

const UNGROUPED = "Other";

function fieldDoc(
  document: OpenApiDocument,
  name: string,
  schema: JsonSchema | undefined,
  required: boolean,
  description?: string,
  example?: { value: unknown },
): FieldDoc {
  const resolved = resolveSchema(document, schema);
  const text = (description ?? resolved.description)?.trim();
  return {
    name,
    type: typeInWords(document, resolved),
    required,
    rules: rulesInWords(document, resolved),
    ...(text ? { description: text } : {}),
    example: example ? example.value : exampleValue(document, resolved, name),
  };
}

/** `anyOf: [{required: [a]}, {required: [b]}]`: one of these groups of fields must be sent. */
function requiredAlternatives(object: JsonSchema): string[][] {
  const variants = object.anyOf ?? [];
  return variants.length && variants.every((v) => Object.keys(v).length === 1 && Array.isArray(v.required))
    ? variants.map((v) => v.required!)
    : [];
}

/** An object's fields in order, each followed by its own nested fields. */
export function fieldsOf(document: OpenApiDocument, schema: JsonSchema, prefix = "", depth = 0): FieldDoc[] {
  const object = objectWithFields(document, schema);
  if (!object || depth >= MAX_FIELD_DEPTH) return [];
  const required = new Set(object.required ?? []);
  const alternatives = requiredAlternatives(object);
  const fields: FieldDoc[] = [];
  for (const [name, property] of Object.entries(object.properties ?? {})) {
    const path = `${prefix}${name}`;
    const resolved = resolveSchema(document, property);
    const field = fieldDoc(document, path, resolved, required.has(name));
    const others = alternatives.filter((names) => !names.includes(name)).flat();
    if (!field.required && alternatives.some((names) => names.includes(name)))
      field.requiredUnless = others.map((n) => `${prefix}${n}`);
    fields.push(field);
    if (objectWithFields(document, resolved)) fields.push(...fieldsOf(document, resolved, `${path}.`, depth + 1));
    else if (resolved.items && objectWithFields(document, resolved.items))
      fields.push(...fieldsOf(document, resolved.items, `${path}[].`, depth + 1));
  }
  return fields;
}

function parameterDoc(document: OpenApiDocument, parameter: ParameterObject): FieldDoc {
  const example = parameter.example !== undefined ? { value: parameter.example } : undefined;
  return fieldDoc(
    document,
    parameter.name,
    parameter.schema,
    parameter.in === "path" || Boolean(parameter.required),
    parameter.description,
    example,
  );
}

function bodyDoc(document: OpenApiDocument, body: RequestBodyObject): BodyDoc {
  const contents = Object.entries(body.content ?? {}).map(([contentType, media]): BodyContentDoc => {
    const schema = resolveSchema(document, media.schema);
    const example =
      media.example !== undefined ? media.example : (ownExample(schema)?.value ?? exampleValue(document, schema, ""));
    if (objectWithFields(document, schema)) return { contentType, fields: fieldsOf(document, schema), example };
    return { contentType, value: fieldDoc(document, "body", schema, body.required ?? false), example };
  });
  return {
    required: body.required ?? false,
    ...(body.description ? { description: body.description.trim() } : {}),
    contents,
  };
}

/** Status codes in numeric order; `default` and ranges such as `4XX` after the exact codes. */
const statusOrder = (status: string) =>
  /^\d{3}$/.test(status) ? Number(status) : status === "default" ? 2000 : 1000 + Number(status[0] ?? 9) * 100;

function endpointDoc(
  document: OpenApiDocument,
  method: string,
  path: string,
  operation: OperationObject,
  shared: ParameterObject[],
): EndpointDoc {
  // Operation parameters override path-level ones with the same name and location.
  const own = (operation.parameters ?? []).map((p) => resolveRef<ParameterObject>(document, p));
  const parameters = [...shared.filter((s) => !own.some((p) => p.name === s.name && p.in === s.in)), ...own];
  const inputs = (where: ParameterObject["in"]) =>
    parameters.filter((p) => p.in === where).map((p) => parameterDoc(document, p));
  const body = operation.requestBody ? resolveRef<RequestBodyObject>(document, operation.requestBody) : undefined;
  const responses = Object.entries(operation.responses ?? {})
    .map(([status, response]) => ({
      status,
      description: (resolveRef<ResponseObject>(document, response).description ?? "").trim(),
    }))
    .sort((a, b) => statusOrder(a.status) - statusOrder(b.status));
  return {
    method: method.toUpperCase(),
    path,
    ...(operation.operationId ? { operationId: operation.operationId } : {}),
    summary: (operation.summary ?? operation.operationId ?? "").trim(),
    ...(operation.description?.trim() ? { description: operation.description.trim() } : {}),
    deprecated: Boolean(operation.deprecated),
    ...(operation["x-ability"] ? { ability: operation["x-ability"] } : {}),
    pathParameters: inputs("path"),
    queryParameters: inputs("query"),
    headerParameters: inputs("header"),
    ...(body ? { body: bodyDoc(document, body) } : {}),
    responses,
  };
}

function authSchemes(document: OpenApiDocument): AuthSchemeDoc[] {
  return Object.entries(document.components?.securitySchemes ?? {}).map(
    ([name, scheme]: [string, SecuritySchemeObject]) => ({
      name,
      type: scheme.type,
      ...(scheme.in ? { in: scheme.in } : {}),
      ...(scheme.name ? { parameter: scheme.name } : {}),
      ...(scheme.description ? { description: scheme.description.trim() } : {}),
    }),
  );
}

/**
 * Every operation of the document, grouped by its first tag. Groups keep the order in which their first route
 * was registered, and endpoints their registration order, so the result only changes when the routes do.
 */
export function describeApi(document: OpenApiDocument): ApiReference {
  const groups = new Map<string, EndpointDoc[]>();
  for (const [path, item] of Object.entries(document.paths)) {
    const shared = (item.parameters ?? []).map((p) => resolveRef<ParameterObject>(document, p));
    for (const method of Object.keys(item)) {
      const operation = HTTP_METHODS.includes(method as never)
        ? item[method as (typeof HTTP_METHODS)[number]]
        : undefined;
      if (!operation) continue;
      const group = operation.tags?.[0] ?? UNGROUPED;
      (groups.get(group) ?? groups.set(group, []).get(group)!).push(
        endpointDoc(document, method, path, operation, shared),
      );
    }
  }
  return {
    title: document.info.title,
    version: document.info.version,
    openapi: document.openapi,
    ...(document.info.description ? { description: document.info.description.trim() } : {}),
    ...(document.servers?.[0]?.url ? { baseUrl: document.servers[0].url } : {}),
    authSchemes: authSchemes(document),
    groups: [...groups].map(([name, endpoints]) => ({ name, endpoints })),
  };
}

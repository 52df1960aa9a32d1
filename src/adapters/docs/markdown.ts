import type { ApiVersion } from "../api/versions.ts";
import type { OpenApiDocument } from "./openapi.ts";
import {
  describeApi,
  type ApiReference,
  type AuthSchemeDoc,
  type BodyDoc,
  type EndpointDoc,
  type FieldDoc,
} from "./reference.ts";
import { listInWords } from "./schema.ts";

/** Inline code that survives backticks inside the text. */
export function code(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** Prose from the document on one line; `<key>` would otherwise be read as an HTML tag. */
const prose = (text: string) => text.replace(/\s+/g, " ").trim().replace(/</g, "\\<");

const sentence = (text: string) => {
  const line = prose(text);
  return /[.!?:]$/.test(line) ? line : `${line}.`;
};

const exampleText = (value: unknown) => code(JSON.stringify(value) ?? "null");

/** `- \`device_name\` (string, required): Unique name. Rules: at least 5 characters; ... Example: \`"core-rtr-01"\`` */
export function fieldLine(field: FieldDoc): string {
  const need = field.required
    ? "required"
    : field.requiredUnless
      ? `required unless ${field.requiredUnless.map(code).join(" or ")} is sent`
      : "optional";
  const parts = [`- ${code(field.name)} (${field.type}, ${need}):`];
  if (field.description) parts.push(sentence(field.description));
  if (field.rules.length) parts.push(`Rules: ${prose(field.rules.join("; "))}.`);
  parts.push(`Example: ${exampleText(field.example)}`);
  return parts.join(" ");
}

const fieldList = (title: string, fields: FieldDoc[]) =>
  fields.length ? [`${title}:`, "", ...fields.map(fieldLine), ""] : [];

function bodyLines(body: BodyDoc): string[] {
  const types = body.contents.map((c) => code(c.contentType));
  const lines = [`Request body: ${body.required ? "required" : "optional"}, content type ${listInWords(types)}.`, ""];
  if (body.description) lines.push(sentence(body.description), "");
  for (const content of body.contents) {
    const heading = body.contents.length > 1 ? ` (${code(content.contentType)})` : "";
    if (content.fields) {
      lines.push(...fieldList(`Body fields${heading}`, content.fields));
      if (content.contentType.includes("json"))
        lines.push(`Example body${heading}:`, "", "```json", JSON.stringify(content.example, null, 2), "```", "");
    } else if (content.value) {
      const { type, rules, example } = content.value;
      lines.push(
        `Body${heading}: ${type}${rules.length ? `; ${prose(rules.join("; "))}` : ""}. Example: ${exampleText(example)}`,
        "",
      );
    }
  }
  return lines;
}

function endpointLines(endpoint: EndpointDoc): string[] {
  const lines = [
    `### ${endpoint.method} ${endpoint.path}`,
    "",
    sentence(endpoint.summary || `${endpoint.method} ${endpoint.path}`),
    "",
  ];
  if (endpoint.deprecated) lines.push("Deprecated: avoid in new integrations.", "");
  if (endpoint.description) lines.push(prose(endpoint.description), "");
  if (endpoint.ability) lines.push(`Ability: ${code(endpoint.ability)}`, "");
  lines.push(...fieldList("Path parameters", endpoint.pathParameters));
  lines.push(...fieldList("Query parameters", endpoint.queryParameters));
  lines.push(...fieldList("Header parameters", endpoint.headerParameters));
  if (endpoint.body) lines.push(...bodyLines(endpoint.body));
  lines.push(
    "Responses:",
    "",
    ...endpoint.responses.map((r) => `- ${code(r.status)}: ${prose(r.description) || "(no description)"}`),
    "",
  );
  return lines;
}

function schemeInWords(scheme: AuthSchemeDoc): string {
  if (scheme.type === "apiKey")
    return `an API key in the request ${scheme.in === "header" ? "header" : `${scheme.in ?? ""} parameter`} ${code(scheme.parameter ?? scheme.name)}`;
  if (scheme.type === "http") return `HTTP ${scheme.name} authentication`;
  return `${scheme.type} (${scheme.name})`;
}

function authenticationLines(reference: ApiReference): string[] {
  const { authSchemes } = reference;
  if (!authSchemes.length) return ["The endpoints need no authentication.", ""];
  const lines = [
    authSchemes.length === 1
      ? `One scheme: ${schemeInWords(authSchemes[0]!)}, sent with every request to the endpoints below (it is not repeated for each endpoint).`
      : `Schemes: ${authSchemes.map(schemeInWords).join("; ")}.`,
    "",
  ];
  for (const scheme of authSchemes) if (scheme.description) lines.push(sentence(scheme.description), "");
  if (reference.groups.some((g) => g.endpoints.some((e) => e.ability))) {
    lines.push(
      "Each endpoint names the ability its token needs (for example `devices.read`). A missing, unknown, revoked or expired key answers 401; a token, or a token owner's role, without the ability answers 403.",
      "",
    );
  }
  return lines;
}

function overviewLines(reference: ApiReference, count: number): string[] {
  const lines = [
    `${prose(reference.title)}: ${count} endpoint${count === 1 ? "" : "s"} in ${reference.groups.length} group${reference.groups.length === 1 ? "" : "s"}, generated from the route definitions (OpenAPI ${reference.openapi}).`,
    "",
  ];
  if (reference.description) lines.push(prose(reference.description), "");
  lines.push(
    'Requests and responses are JSON (`application/json`) unless an endpoint names another content type; field names are snake_case and timestamps ISO-8601 in UTC. A record answers `{"data": {...}}`; a list answers `{"data": [...], "links": {...}, "meta": {...}}`. Every error answers JSON with a human-readable `message`; a validation failure (422) also has `errors`, naming each field and its problems.',
    "",
    "Groups:",
    "",
    ...reference.groups.map(
      (g) => `- ${prose(g.name)}: ${g.endpoints.length} endpoint${g.endpoints.length === 1 ? "" : "s"}`,
    ),
    "",
  );
  return lines;
}

/**
 * The Markdown description of one API version, for integrators and AI agents: overview, authentication, base
 * URL, then one section per group with every endpoint's inputs and status codes (no response shapes). A pure
 * function of the document, so the same routes always give the same bytes.
 */
export function renderApiMarkdown(document: OpenApiDocument, version: ApiVersion): string {
  const reference = describeApi(document);
  const n = version.replace(/^v/, "");
  const count = reference.groups.reduce((sum, g) => sum + g.endpoints.length, 0);
  const example = reference.groups[0]?.endpoints[0];
  const lines = [
    `# REST API v${n}`,
    "",
    `Version: ${n}.0.0`,
    "",
    "## Overview",
    "",
    ...overviewLines(reference, count),
    "## Authentication",
    "",
    ...authenticationLines(reference),
    "## Base URL",
    "",
    reference.baseUrl ? code(reference.baseUrl) : "Not recorded in the document.",
    "",
    ...(reference.baseUrl && example
      ? [
          `Endpoint paths below are relative to it: ${code(`${example.method} ${example.path}`)} means ${code(`${example.method} ${reference.baseUrl}${example.path}`)}.`,
          "",
        ]
      : []),
  ];
  for (const group of reference.groups) {
    lines.push(`## ${prose(group.name)}`, "");
    for (const endpoint of group.endpoints) lines.push(...endpointLines(endpoint));
  }
  return lines.join("\n").replace(/\n+$/, "\n");
}

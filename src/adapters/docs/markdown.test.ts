import { describe, expect, it } from "vitest";
import { API_VERSIONS, createVersionApi, openApiDocument, type ApiVersion } from "../api/versions.ts";
import { renderApiMarkdown } from "./markdown.ts";
import { HTTP_METHODS, type OpenApiDocument } from "./openapi.ts";

const APP_URL = "https://netkeep.example.test:8443";

/** The document exactly as the build caches it: JSON text read back. */
const documentOf = (version: ApiVersion) =>
  JSON.parse(JSON.stringify(openApiDocument(version, APP_URL, "netkeep"))) as OpenApiDocument;

/** Every `METHOD /path` the version's router answers, in OpenAPI's `{param}` spelling. */
function routedEndpoints(version: ApiVersion): string[] {
  const routes = createVersionApi(version).routes.filter((r) => r.method !== "ALL");
  return [
    ...new Set(routes.map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, "{$1}")}`)),
  ].sort();
}

type Section = { heading: string; lines: string[] };

/** The `##` sections in order, and for each `###` endpoint the `##` section it sits under. */
function outline(markdown: string) {
  const sections: Section[] = [];
  const groupOf = new Map<string, string[]>();
  const endpoints: Section[] = [];
  for (const line of markdown.split("\n")) {
    if (line.startsWith("## ")) sections.push({ heading: line.slice(3), lines: [] });
    else if (line.startsWith("### ")) {
      const heading = line.slice(4);
      groupOf.set(heading, [...(groupOf.get(heading) ?? []), sections.at(-1)?.heading ?? "(none)"]);
      endpoints.push({ heading, lines: [] });
    } else {
      sections.at(-1)?.lines.push(line);
      endpoints.at(-1)?.lines.push(line);
    }
  }
  return { sections, groupOf, endpoints };
}

const endpointSection = (markdown: string, heading: string) =>
  outline(markdown).endpoints.find((e) => e.heading === heading);
const fieldLine = (section: Section, name: string) => section.lines.find((l) => l.startsWith(`- \`${name}\` (`));

describe.each(API_VERSIONS)("the %s Markdown", (version) => {
  const n = version.slice(1);
  const document = documentOf(version);
  const markdown = renderApiMarkdown(document, version);
  const { sections, groupOf, endpoints } = outline(markdown);

  it("opens with the title and version line, then Overview, Authentication and Base URL, then one section per group", () => {
    const lines = markdown.split("\n");
    expect(lines[0]).toBe(`# REST API v${n}`);
    expect(lines.filter((l) => l.trim()).slice(1, 2)).toEqual([`Version: ${n}.0.0`]);
    expect(lines.filter((l) => l.startsWith("# "))).toHaveLength(1);

    const tags = new Set<string>();
    for (const item of Object.values(document.paths))
      for (const m of HTTP_METHODS) if (item[m]) tags.add(item[m]!.tags![0]!);
    expect(sections.map((s) => s.heading).slice(0, 3)).toEqual(["Overview", "Authentication", "Base URL"]);
    expect(
      sections
        .slice(3)
        .map((s) => s.heading)
        .sort(),
    ).toEqual([...tags].sort());
    expect(tags.size).toBeGreaterThan(1);
  });

  it("has exactly one heading per routed endpoint, each under the group its route declares", () => {
    const headings = endpoints.map((e) => e.heading);
    expect(new Set(headings).size).toBe(headings.length);
    expect([...headings].sort()).toEqual(routedEndpoints(version));
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of HTTP_METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const heading = `${method.toUpperCase()} ${path}`;
        expect(heading).toMatch(new RegExp(`^[A-Z]+ /api/v${n}/`));
        expect(groupOf.get(heading), heading).toEqual([operation.tags![0]]);
        const section = endpointSection(markdown, heading)!;
        expect(
          section.lines.filter((l) => l.trim())[0]!.startsWith(operation.summary!.replace(/</g, "\\<")),
          heading,
        ).toBe(true);
        // The section ends with every status code the route declares and its meaning: no response shapes.
        const responses = section.lines.slice(section.lines.indexOf("Responses:") + 1).filter((l) => l.trim());
        expect(
          responses.every((l) => /^- `\d{3}`: \S/.test(l)),
          heading,
        ).toBe(true);
        expect(responses.map((l) => l.slice(3, 6)).sort(), heading).toEqual(Object.keys(operation.responses!).sort());
      }
    }
  });

  it("states one authentication scheme, the apitoken header, once and not per endpoint", () => {
    const auth = sections.find((s) => s.heading === "Authentication")!.lines.join("\n");
    expect(auth).toContain("One scheme: an API key in the request header `apitoken`");
    for (const endpoint of endpoints)
      expect(
        endpoint.lines.some((l) => l.startsWith("- `apitoken` (")),
        endpoint.heading,
      ).toBe(false);
    expect(markdown.match(/header `apitoken`/g)).toHaveLength(1);
  });

  it("gives the configured application address as the base URL", () => {
    const base = sections.find((s) => s.heading === "Base URL")!.lines.join("\n");
    expect(base).toContain(`\`${APP_URL}\``);
    const other = renderApiMarkdown(
      JSON.parse(JSON.stringify(openApiDocument(version, "http://10.1.2.3:3000", "netkeep"))),
      version,
    );
    expect(other).toContain("`http://10.1.2.3:3000`");
    expect(other).not.toContain(APP_URL);
  });

  it("describes the device create body with its rules in words", () => {
    const create = endpointSection(markdown, `POST /api/v${n}/devices`)!;
    expect(create.lines).toContain("Request body: required, content type `application/json`.");
    const name = fieldLine(create, "device_name")!;
    expect(name).toMatch(/^- `device_name` \(string, required\): /);
    expect(name).toContain("at least 5 characters");
    expect(name).toContain("must not contain whitespace");
    expect(name).toMatch(/Example: `"[^"\s]{5,}"`$/);
    expect(fieldLine(create, "device_ip")).toMatch(
      /^- `device_ip` \(string, required\): .*an IPv4 address, an IPv6 address or a hostname/,
    );
    expect(fieldLine(create, "device_snippet_cred_id")).toMatch(
      /^- `device_snippet_cred_id` \(integer or null, optional\): .*a whole number; at least 0\./,
    );
    expect(fieldLine(create, "device_port_override")).toContain("at least 1; at most 65535");
    expect(fieldLine(create, "custom")).toContain("each key: made of 1 to 64 letters, digits, '_' or '-'");
    // The service refuses a create without a vendor unless a profile gives one; the document says the same.
    expect(fieldLine(create, "device_vendor")).toMatch(
      /^- `device_vendor` \(string or null, required unless `device_profile_id` is sent\): /,
    );
    expect(fieldLine(create, "device_profile_id")).toMatch(/, required unless `device_vendor` is sent\): /);
    const patch = endpointSection(markdown, `PATCH /api/v${n}/devices/{id}`)!;
    expect(fieldLine(patch, "device_vendor")).toMatch(/\(string or null, optional\)/);
  });

  it("lists path and query parameters with type, required flag, rules and example", () => {
    const show = endpointSection(markdown, `GET /api/v${n}/devices/{id}`)!;
    expect(show.lines).toContain("Path parameters:");
    expect(fieldLine(show, "id")).toBe("- `id` (integer, required): Rules: a whole number; at least 1. Example: `1`");
    const list = endpointSection(markdown, `GET /api/v${n}/devices`)!;
    expect(list.lines).toContain("Query parameters:");
    expect(fieldLine(list, "per_page")).toMatch(
      /^- `per_page` \(integer, optional\): .*Rules: a whole number; at least 1; at most 500\. Example: `\d+`$/,
    );
  });

  it("is a pure function of the document: rendering a fresh extraction again gives the same bytes", () => {
    expect(renderApiMarkdown(documentOf(version), version)).toBe(markdown);
  });
});

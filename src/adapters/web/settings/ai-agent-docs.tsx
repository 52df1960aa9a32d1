import type { Context, Hono } from "hono";
import { API_VERSIONS, type ApiVersion } from "../../api/versions.ts";
import { downloadFilename, generateCommand, type ApiDocsFileInfo } from "../api-docs-files.ts";
import type { WebEnv } from "../env.ts";
import { formatBytes, Time } from "../format.tsx";
import { renderPage, renderProblem, webHeaders } from "../layout.tsx";

const isVersion = (v: string): v is ApiVersion => (API_VERSIONS as readonly string[]).includes(v);
const base = (version: ApiVersion) => `/settings/restapi/ai-agent-docs/${version}`;

type FileRow = { version: ApiVersion; info: ApiDocsFileInfo | null };

async function fileRows(c: Context<WebEnv>): Promise<FileRow[] | null> {
  const files = c.var.web.apiDocsFiles;
  if (!files) return null;
  return Promise.all(API_VERSIONS.map(async (version) => ({ version, info: await files.stat(version) })));
}

const unavailable =
  "This server process was started without access to its storage directory, so generated files cannot be shown here.";

/** One card per API version: present (size, time, View / Copy / Download) or absent (the command that makes it). */
export async function aiAgentDocsTab(c: Context<WebEnv>) {
  const rows = await fileRows(c);
  return (
    <div>
      <p class="muted">
        A Markdown description of every endpoint of each API version, written for integrators and AI agents. The files
        are generated on the server by a command, never automatically, and are available only here, to administrators.
      </p>
      {!rows && <p class="alert error">{unavailable}</p>}
      {rows?.map(({ version, info }) => (
        <section class="card" id={`ai-docs-${version}`} data-version={version} data-state={info ? "present" : "absent"}>
          <h2>
            REST API {version}{" "}
            <span class={`badge ${info ? "present" : "absent"}`}>{info ? "generated" : "not generated"}</span>
          </h2>
          {info ? (
            <div>
              <table>
                <tbody>
                  <tr>
                    <th>File</th>
                    <td class="mono">{downloadFilename(c.var.services.config.appName, version)}</td>
                  </tr>
                  <tr>
                    <th>Size</th>
                    <td data-size-bytes={String(info.sizeBytes)}>{formatBytes(info.sizeBytes)}</td>
                  </tr>
                  <tr>
                    <th>Last generated</th>
                    <td>
                      <Time at={info.modifiedAt} none="-" />
                    </td>
                  </tr>
                </tbody>
              </table>
              <div class="actions">
                <a class="button" href={base(version)}>
                  View
                </a>
                <button type="button" class="secondary" data-copy-url={`${base(version)}/download`}>
                  Copy
                </button>
                <a class="button secondary" href={`${base(version)}/download`} download>
                  Download
                </a>
              </div>
              <p class="muted">
                Regenerate after upgrading netkeep: <code>{generateCommand(version)}</code>
              </p>
            </div>
          ) : (
            <div>
              <p>
                The file for {version} has not been generated yet. Run this from the application root on the server:
              </p>
              <div class="secret">
                <code id={`command-${version}`}>{generateCommand(version)}</code>
                <button type="button" class="secondary" data-copy-from={`command-${version}`}>
                  Copy
                </button>
              </div>
              <p class="muted">
                Then reload this page. <code>{generateCommand("all")}</code> writes every version at once.
              </p>
            </div>
          )}
        </section>
      ))}
    </div>
  );
}

/** The markdown of a version, or the page that explains why there is none. */
async function markdownOr404(
  c: Context<WebEnv>,
  version: string,
): Promise<{ version: ApiVersion; markdown: string } | Response> {
  const files = c.var.web.apiDocsFiles;
  if (!isVersion(version)) {
    return renderProblem(
      c,
      404,
      {
        title: "No such API version",
        message: `There is no API version '${version}'; use one of: ${API_VERSIONS.join(", ")}.`,
        next: { href: "/settings/restapi?tab=ai-agent-docs", label: "Back to AI Agent Docs" },
      },
      c.var.session,
    );
  }
  const markdown = files ? await files.read(version) : null;
  if (markdown === null) {
    return renderProblem(
      c,
      404,
      {
        title: `No generated file for ${version}`,
        message: files
          ? `The ${version} description has not been generated. Run on the server: ${generateCommand(version)}`
          : unavailable,
        next: { href: "/settings/restapi?tab=ai-agent-docs", label: "Back to AI Agent Docs" },
      },
      c.var.session,
    );
  }
  return { version, markdown };
}

/**
 * The admin endpoints behind the tab: list (JSON), view (the Markdown, HTML-escaped in a page) and download.
 * They sit behind the admin session guard like the rest of /settings; the files have no other URL.
 */
export function registerAiAgentDocsRoutes(web: Hono<WebEnv>): void {
  web.get("/settings/restapi/ai-agent-docs", async (c) => {
    const rows = await fileRows(c);
    webHeaders(c);
    if (!rows) return c.json({ message: unavailable }, 503);
    return c.json(
      {
        data: rows.map(({ version, info }) => ({
          version,
          exists: info !== null,
          size_bytes: info?.sizeBytes ?? null,
          generated_at: info?.modifiedAt.toISOString() ?? null,
          view_url: `${base(version)}`,
          download_url: `${base(version)}/download`,
          generate_command: generateCommand(version),
        })),
      },
      200,
    );
  });

  web.get("/settings/restapi/ai-agent-docs/:version", async (c) => {
    const found = await markdownOr404(c, c.req.param("version"));
    if (found instanceof Response) return found;
    return renderPage(c, 200, {
      title: `REST API ${found.version} description`,
      session: c.var.session,
      children: (
        <div>
          <p>
            <a href="/settings/restapi?tab=ai-agent-docs">← AI Agent Docs</a>
          </p>
          <h1>REST API {found.version}: AI agent description</h1>
          <div class="actions">
            <button type="button" class="secondary" data-copy-from="markdown">
              Copy
            </button>
            <a class="button secondary" href={`${base(found.version)}/download`} download>
              Download
            </a>
          </div>
          <pre id="markdown">{found.markdown}</pre>
        </div>
      ),
    });
  });

  web.get("/settings/restapi/ai-agent-docs/:version/download", async (c) => {
    const found = await markdownOr404(c, c.req.param("version"));
    if (found instanceof Response) return found;
    webHeaders(c);
    c.header("Content-Type", "text/markdown; charset=utf-8");
    c.header(
      "Content-Disposition",
      `attachment; filename="${downloadFilename(c.var.services.config.appName, found.version)}"`,
    );
    return c.body(found.markdown, 200);
  });
}

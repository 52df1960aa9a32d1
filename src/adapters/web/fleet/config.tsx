import type { Hono } from "hono";
import { configText, getConfig } from "../../../modules/configs/index.ts";
import { configFileName } from "../../../modules/configs/index.ts";
import type { WebEnv } from "../env.ts";
import { formatBytes, Time } from "../format.tsx";
import { renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";

/** The text's lines; a final newline ends the last line rather than starting an empty one. */
export const textLines = (text: string) => {
  const lines = text.split("\n");
  if (lines.length > 1 && lines.at(-1) === "") lines.pop();
  return lines;
};

/**
 * One stored version: the text with line numbers (drawn by the stylesheet from data-n, so copying the text copies
 * no numbers), find-in-page, and the download the API serves, under configs.read like GET /configs/{id}.
 */
export function registerConfigPage(web: Hono<WebEnv>): void {
  web.get("/configs/:id{[^/]+}", requirePage("configs.read"), async (c) => {
    const id = pathId(c.req.param("id"), "Config");
    const { db } = c.var.services;
    const { out, row } = await getConfig(db, c.var.auth.scope, id);
    const text = await configText(db, row);
    return renderPage(c, 200, {
      title: `${out.device_name} ${out.command} v${out.version}`,
      session: c.var.session,
      children: (
        <section class="card">
          <p class="muted">
            <a href="/devices">Devices</a> / <a href={`/devices/${out.device_id}`}>{out.device_name}</a>
          </p>
          <h1>
            {out.device_name}: <code>{out.command}</code> v{out.version}
            {out.latest && <span class="badge ok">latest</span>}
          </h1>
          <p class="muted">
            First seen <Time at={new Date(out.first_seen_at)} none="" />, last seen{" "}
            <Time at={new Date(out.last_seen_at)} none="" />
            {`, ${out.lines} lines, ${formatBytes(out.size)}, SHA-256 ${out.hash.slice(0, 12)}…`}
          </p>
          <div class="actions">
            <a
              class="button"
              href={`/configs/${id}/download`}
              download={configFileName(out.device_name, out.command, out.version)}
            >
              Download
            </a>
            {c.var.auth.abilities.has("configs.write") && (
              <a class="button danger" href={`/configs/${id}/delete`}>
                Delete
              </a>
            )}
            <div class="find">
              <label for="find" class="visually-hidden">
                Find in this configuration
              </label>
              <input type="search" id="find" data-find="config-text" placeholder="Find in this configuration" />
              <span id="find-count" class="muted" role="status" aria-live="polite"></span>
            </div>
          </div>
          <pre class="config numbered" id="config-text">
            {textLines(text).map((line, i) => (
              <span class="line" id={`L${i + 1}`} data-n={String(i + 1)}>
                {line}
              </span>
            ))}
          </pre>
        </section>
      ),
    });
  });

  web.get("/configs/:id/download", requirePage("configs.read"), async (c) => {
    const { db } = c.var.services;
    const { out, row } = await getConfig(db, c.var.auth.scope, pathId(c.req.param("id"), "Config"));
    return c.text(await configText(db, row), 200, {
      "Content-Disposition": `attachment; filename="${configFileName(out.device_name, out.command, out.version)}"`,
      "Cache-Control": "no-store",
    });
  });
}

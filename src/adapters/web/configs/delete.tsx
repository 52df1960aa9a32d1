import type { Context, Hono } from "hono";
import {
  deleteConfig,
  deletedConfigMessage,
  getConfig,
  seriesVersions,
  type ConfigOut,
} from "../../../modules/configs/index.ts";
import { plural } from "../../../kernel/words.ts";
import type { WebEnv } from "../env.ts";
import { readForm } from "../form.tsx";
import { Time } from "../format.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";

/** What deleting the version leaves of its device's command, as DELETE /configs/{id} does it (it refuses none). */
async function consequence(c: Context<WebEnv>, out: ConfigOut): Promise<string> {
  const series = await seriesVersions(c.var.services.db, c.var.auth.scope, out.device_id, out.command);
  if (series.total <= 1)
    return `It is the only stored version of ${out.command} for ${out.device_name}: the device will have none until its next backup.`;
  const others =
    series.total === 2
      ? "The other version stays, with its number."
      : `The other ${series.total - 1} versions stay, with their numbers.`;
  if (!out.latest) return others;
  const previous = series.rows.find((r) => r.id !== out.id)!;
  return `It is the latest version: v${previous.version} becomes the latest (nothing is renumbered). ${others}`;
}

function Crumbs(props: { out: ConfigOut }) {
  const { out } = props;
  return (
    <p class="muted">
      <a href="/devices">Devices</a> / <a href={`/devices/${out.device_id}`}>{out.device_name}</a> /{" "}
      <a href={`/configs/${out.id}`}>{`v${out.version}`}</a>
    </p>
  );
}

/**
 * Deleting one stored version (DELETE /configs/{id}) after a confirmation page that says what it leaves: the
 * version before it becomes the latest, or the device has no copy of that command any more. A version of a device
 * outside the caller's scope is a 404, as in the API.
 */
export function registerConfigDeletePages(web: Hono<WebEnv>): void {
  const write = requirePage("configs.write");
  const versionOf = async (c: Context<WebEnv>) =>
    (await getConfig(c.var.services.db, c.var.auth.scope, pathId(c.req.param("id")!, "Config"))).out;

  web.get("/configs/:id/delete", write, async (c) => {
    const out = await versionOf(c);
    return renderPage(c, 200, {
      title: `Delete ${out.device_name} ${out.command} v${out.version}`,
      session: c.var.session,
      children: (
        <section class="card">
          <Crumbs out={out} />
          <h1>{`Delete v${out.version} of ${out.device_name}: ${out.command}?`}</h1>
          <p>
            Stored <Time at={new Date(out.first_seen_at)} none="" />, {plural(out.lines, "line")}. Its change record
            goes with it; its text too unless another version has the same text. This cannot be undone.
          </p>
          <p class="alert warning" id="delete-consequence">
            {await consequence(c, out)}
          </p>
          <CsrfForm action={`/configs/${out.id}/delete`} csrf={c.var.session.csrfToken}>
            <div class="actions">
              <button type="submit" class="danger">
                Delete the version
              </button>
              <a href={`/configs/${out.id}`}>Cancel</a>
            </div>
          </CsrfForm>
        </section>
      ),
    });
  });

  web.post("/configs/:id/delete", write, async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const out = await versionOf(c);
    const { db, clock } = c.var.services;
    const { blobDeleted } = await deleteConfig(db, c.var.auth.scope, c.var.auth, out.id, clock.now());
    return renderPage(c, 200, {
      title: `Deleted ${out.device_name} ${out.command} v${out.version}`,
      session: c.var.session,
      children: (
        <section class="card">
          <p class="muted">
            <a href="/devices">Devices</a> / <a href={`/devices/${out.device_id}`}>{out.device_name}</a>
          </p>
          <h1>{`Deleted v${out.version} of ${out.device_name}: ${out.command}`}</h1>
          <p class="alert success" role="status">
            {deletedConfigMessage(out.id, blobDeleted)}
          </p>
          <p>
            <a href={`/devices/${out.device_id}#backups`}>{`Back to ${out.device_name}'s backups`}</a>
          </p>
        </section>
      ),
    });
  });
}

import type { Context, Hono } from "hono";
import { getDevice, HostKeyResetInput, pinnedHostKey, resetHostKey } from "../../../modules/devices/index.ts";
import type { WebEnv } from "../env.ts";
import { Field, fieldProblems, parsedBy, readForm, text, type FieldProblems } from "../form.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";

async function hostKeyPage(
  c: Context<WebEnv>,
  id: number,
  status: 200 | 422,
  typed = "",
  problems?: FieldProblems,
  done?: string,
) {
  const { db } = c.var.services;
  const device = await getDevice(db, c.var.auth.scope, id);
  const pinned = await pinnedHostKey(db, c.var.auth.scope, id);
  const csrf = c.var.session.csrfToken;
  return renderPage(c, status, {
    title: `${device.device_name}: SSH host key`,
    session: c.var.session,
    children: (
      <section class="card">
        <p class="muted">
          <a href="/devices">Devices</a> / <a href={`/devices/${id}`}>{device.device_name}</a>
        </p>
        <h1>{`SSH host key of ${device.device_name}`}</h1>
        {done && (
          <p class="alert success" role="status">
            {done}
          </p>
        )}
        <p id="pinned-key">
          {pinned ? (
            <>
              Pinned: <code>{pinned}</code>. A connection to a device presenting another key stops before logging in.
            </>
          ) : (
            "No key is pinned: the next connection pins the key the device presents."
          )}
        </p>
        <CsrfForm action={`/devices/${id}/host-key/pin`} csrf={csrf} class="grid-form entity-form">
          <Field
            id="h-fingerprint"
            name="fingerprint"
            label="Pin this fingerprint"
            problems={problems}
            hint="As ssh-keygen -lf prints it, e.g. SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU; checked against the key the device presents at its next connection."
          >
            <input type="text" id="h-fingerprint" name="fingerprint" value={typed} class="mono" />
          </Field>
          <div class="actions">
            <button type="submit">Pin the fingerprint</button>
          </div>
        </CsrfForm>
        <CsrfForm
          action={`/devices/${id}/host-key`}
          csrf={csrf}
          confirm="Trust the next SSH host key this device presents? Do this only when you know why its key changed."
        >
          <div class="actions">
            <button type="submit" class="secondary">
              Forget the pinned key (accept the next one)
            </button>
            <a href={`/devices/${id}`}>Back to the device</a>
          </div>
        </CsrfForm>
      </section>
    ),
  });
}

/**
 * A device's SSH host key: the pinned fingerprint, and pinning a given one (POST /devices/{id}/host-key/reset with
 * `fingerprint`, its schema checking what was typed) rather than trusting whatever key the device presents next.
 */
export function registerHostKeyPages(web: Hono<WebEnv>): void {
  const write = requirePage("devices.write");
  web.get("/devices/:id/host-key", write, (c) => hostKeyPage(c, pathId(c.req.param("id"), "Device"), 200));

  web.post("/devices/:id/host-key/pin", write, async (c) => {
    const form = await readForm(c);
    if (!form) return csrfRefusal(c, c.var.session);
    const id = pathId(c.req.param("id"), "Device");
    const typed = text(form, "fingerprint") ?? "";
    try {
      const { fingerprint } = parsedBy(HostKeyResetInput.required(), { fingerprint: typed });
      const { db, clock } = c.var.services;
      const answer = await resetHostKey(db, c.var.auth, id, fingerprint, clock.now());
      return hostKeyPage(
        c,
        id,
        200,
        "",
        undefined,
        `Pinned ${fingerprint}${answer.previous_fingerprint && answer.previous_fingerprint !== fingerprint ? ` (was ${answer.previous_fingerprint})` : ""}.`,
      );
    } catch (err) {
      const problems = fieldProblems(err);
      if (!problems) throw err;
      return hostKeyPage(c, id, 422, typed, problems);
    }
  });
}

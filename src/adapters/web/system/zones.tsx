import type { Context, Hono } from "hono";
import {
  collectorsByZone,
  endCollector,
  revokeEnrollmentKey,
  rotateEnrollmentKey,
  zoneCollectors,
  zonesResource,
  type ZoneActor,
} from "../../../modules/zones/index.ts";
import { tagsResource } from "../../../modules/tags/index.ts";
import { plural } from "../../../kernel/words.ts";
import { choices } from "../choices.ts";
import type { WebEnv } from "../env.ts";
import { readForm } from "../form.tsx";
import { formatBytes, Time } from "../format.tsx";
import { csrfRefusal } from "../guard.ts";
import { CsrfForm, renderPage } from "../layout.tsx";
import { type Choices, type PageResource, registerResourcePages } from "../inventory/resource-pages.tsx";
import { pathId } from "../path-id.ts";
import { requirePage } from "../viewer.ts";

type Collector = Awaited<ReturnType<typeof zoneCollectors>>[number];

const actorOf = (c: Context<WebEnv>): ZoneActor => ({
  db: c.var.services.db,
  auth: c.var.auth,
  now: c.var.services.clock.now(),
});

const tagChoices = (c: Context<WebEnv>) => choices(c, tagsResource, "tags.read", "name");

/** One collector's last heartbeat, as a line. */
function CollectorLine(props: { s: Collector }) {
  const { s } = props;
  const state = s.revoked ? "revoked" : s.alive ? "alive" : "not alive";
  return (
    <span class="collector" data-collector={String(s.id)}>
      <strong>{s.name}</strong> <span class={s.alive && !s.revoked ? "badge ok" : "badge failed"}>{state}</span>{" "}
      <span class="muted">
        {s.version ? `v${s.version}` : "no version yet"}, {plural(s.sessions, "session")}, spool{" "}
        {formatBytes(s.spool_bytes)}
        {s.spool_dropped ? ` (${s.spool_dropped} dropped)` : ""}, last heartbeat{" "}
        <Time at={s.last_heartbeat_at ? new Date(s.last_heartbeat_at) : null} none="never" />
      </span>
    </span>
  );
}

/** The page answering a key once: nothing keeps it but the hash. */
function keyPage(c: Context<WebEnv>, zone: { id: number; name: string }, key: string) {
  return renderPage(c, 200, {
    title: `Enrollment key of ${zone.name}`,
    session: c.var.session,
    children: (
      <section class="card">
        <h1>{`Enrollment key of ${zone.name}`}</h1>
        <p class="alert warning" role="status">
          Copy it now: it is shown this once and only its hash is kept. Issue a new one from the zone's page if it is
          lost.
        </p>
        <p>
          <code id="enrollment-key">{key}</code>
        </p>
        <p class="muted">On a machine at the site:</p>
        <pre class="mono">{`npx svc collector:remote --server ${new URL(c.req.url).origin} --enroll ${key}`}</pre>
        <p>
          <a href={`/zones/${zone.id}`}>The zone's collectors</a> · <a href="/zones">Zones</a>
        </p>
      </section>
    ),
  });
}

const DONE: Record<string, string> = {
  "key-revoked": "Enrollment key revoked: nobody enrolls with it any more.",
  revoked: "Collector revoked: it is refused from its next request on and stops.",
  deleted: "Collector deleted: it is refused from its next request on and stops.",
};

/** Zones (where devices are reached from) and their remote collectors, through the zones module. */
export function registerZonePages(web: Hono<WebEnv>): void {
  registerResourcePages(web, {
    path: "/zones",
    title: "Zones",
    singular: "zone",
    plural: "zones",
    ability: "system",
    resource: zonesResource as unknown as PageResource,
    nameField: "name",
    intro:
      "Where devices are reached from: a local zone is polled by the collectors beside the server, a remote zone only by the site collectors enrolled in it.",
    empty: "No zone here.",
    fields: [
      { name: "name", label: "Name", kind: "text", hint: "Unique, e.g. branch-ams." },
      { name: "description", label: "Description", kind: "textarea" },
      {
        name: "mode",
        label: "Mode",
        kind: "select",
        hint: "remote: only its site collectors poll its devices; a new remote zone shows its enrollment key once.",
        // The API's values themselves, not ids: the form sends them as typed.
        options: async () =>
          [
            ["local", "local"],
            ["remote", "remote"],
          ] as unknown as Choices,
      },
      {
        name: "tag_ids",
        label: "Tags its devices carry",
        kind: "checkboxes",
        hint: "Role scopes follow them.",
        options: tagChoices,
      },
    ],
    newValues: () => ({ mode: "local" }),
    enrich: async (c, rows) => {
      const [byZone, tagNames] = await Promise.all([collectorsByZone(actorOf(c)), tagChoices(c)]);
      const names = new Map(tagNames ?? []);
      return rows.map((r) => ({
        ...r,
        collectors: byZone.get(r.id) ?? [],
        tag_names: (r.tag_ids as number[]).map((id) => names.get(id) ?? `#${id}`),
      }));
    },
    columns: [
      {
        label: "Name",
        cell: (r) => (
          <>
            <a href={`/zones/${r.id}`}>
              <strong>{String(r.name)}</strong>
            </a>
            {r.description ? <div class="muted">{String(r.description)}</div> : null}
          </>
        ),
      },
      { label: "Mode", cell: (r) => String(r.mode) },
      { label: "Tags", cell: (r) => (r.tag_names as string[]).join(", ") },
      {
        label: "Devices",
        cell: (r) => <a href={`/devices?filter[zone_id]=${r.id}`}>{plural(Number(r.devices_count), "device")}</a>,
      },
      {
        label: "Collectors",
        cell: (r) => {
          const list = r.collectors as Collector[];
          if (r.mode === "local") return <span class="muted">the built-in ones</span>;
          return list.length ? (
            <ul class="links">
              {list.map((s) => (
                <li>
                  <CollectorLine s={s} />
                </li>
              ))}
            </ul>
          ) : (
            <span class="muted">none enrolled: its jobs wait</span>
          );
        },
      },
    ],
    rowLinks: (r) => <a href={`/zones/${r.id}`}>Collectors and key</a>,
    created: (c, saved) =>
      typeof saved.enrollment_key === "string"
        ? keyPage(c, { id: saved.id, name: String(saved.name) }, saved.enrollment_key)
        : undefined,
    deleteNote: (r) =>
      `Devices of yours in it: ${r.devices_count}. A zone holding devices cannot be deleted (move them first), nor the local zone; its remote collectors are removed with it and stop.`,
  });

  const zoneOf = async (c: Context<WebEnv>) =>
    (await zonesResource.show(c.var.services.db, pathId(c.req.param("id")!, "zone"), c.var.auth.scope)) as {
      id: number;
      name: string;
      mode: string;
      devices_count: number;
      has_enrollment_key: boolean;
    };

  web.get("/zones/:id", requirePage("system.read"), async (c) => {
    const zone = await zoneOf(c);
    const collectors = await zoneCollectors(actorOf(c), zone.id);
    const canWrite = c.var.auth.abilities.has("system.write");
    const csrf = c.var.session.csrfToken;
    const done = DONE[c.req.query("done") ?? ""];
    return renderPage(c, 200, {
      title: `Zone ${zone.name}`,
      session: c.var.session,
      children: (
        <section class="card">
          <p class="muted">
            <a href="/zones">Zones</a>
          </p>
          <h1>{`Zone ${zone.name}`}</h1>
          {done && (
            <p class="alert success" role="status">
              {done}
            </p>
          )}
          <p>
            {`Mode ${zone.mode}, ${plural(Number(zone.devices_count), "device")} of yours.`}{" "}
            {canWrite && <a href={`/zones/${zone.id}/edit`}>Edit</a>}
          </p>
          {zone.mode === "remote" && (
            <>
              <h2>Enrollment key</h2>
              <p id="key-state">
                {zone.has_enrollment_key
                  ? "A key is issued: site collectors can enroll with it."
                  : "No key: nobody can enroll. Issue one to add a collector."}
              </p>
              {canWrite && (
                <div class="actions">
                  <CsrfForm action={`/zones/${zone.id}/enrollment-key`} csrf={csrf}>
                    <button type="submit">{zone.has_enrollment_key ? "Issue a new key" : "Issue a key"}</button>
                  </CsrfForm>
                  {zone.has_enrollment_key && (
                    <CsrfForm action={`/zones/${zone.id}/enrollment-key/revoke`} csrf={csrf}>
                      <button type="submit" class="danger">
                        Revoke the key
                      </button>
                    </CsrfForm>
                  )}
                </div>
              )}
            </>
          )}
          <h2>Remote collectors</h2>
          {collectors.length ? (
            <div class="table-wrap">
              <table id="zone-collectors">
                <thead>
                  <tr>
                    <th>Collector</th>
                    {canWrite && (
                      <th>
                        <span class="visually-hidden">Actions</span>
                      </th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {collectors.map((s) => (
                    <tr data-id={String(s.id)}>
                      <td>
                        <CollectorLine s={s} />
                      </td>
                      {canWrite && (
                        <td class="actions">
                          {!s.revoked && (
                            <CsrfForm action={`/zones/${zone.id}/collectors/${s.id}/revoke`} csrf={csrf}>
                              <button type="submit" class="secondary">
                                Revoke
                              </button>
                            </CsrfForm>
                          )}
                          <CsrfForm action={`/zones/${zone.id}/collectors/${s.id}/delete`} csrf={csrf}>
                            <button type="submit" class="danger">
                              Delete
                            </button>
                          </CsrfForm>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p class="muted">
              {zone.mode === "remote"
                ? "No collector enrolled: the zone's jobs wait until one is."
                : "A local zone is polled by the collectors beside the server."}
            </p>
          )}
        </section>
      ),
    });
  });

  web.post("/zones/:id/enrollment-key", requirePage("system.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const zone = await zoneOf(c);
    return keyPage(c, zone, await rotateEnrollmentKey(actorOf(c), zone.id));
  });

  web.post("/zones/:id/enrollment-key/revoke", requirePage("system.write"), async (c) => {
    if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
    const zone = await zoneOf(c);
    await revokeEnrollmentKey(actorOf(c), zone.id);
    return c.redirect(`/zones/${zone.id}?done=key-revoked`, 303);
  });

  for (const how of ["revoke", "delete"] as const)
    web.post(`/zones/:id/collectors/:collector/${how}`, requirePage("system.write"), async (c) => {
      if (!(await readForm(c))) return csrfRefusal(c, c.var.session);
      const zone = await zoneOf(c);
      await endCollector(actorOf(c), zone.id, pathId(c.req.param("collector")!, "remote collector"), how);
      return c.redirect(`/zones/${zone.id}?done=${how === "revoke" ? "revoked" : "deleted"}`, 303);
    });
}

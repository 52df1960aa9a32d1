import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../platform/http/env.ts";
import { zonesResource } from "./resource.ts";
import {
  dashboardCollectorsRoute,
  deleteCollectorRoute,
  listCollectorsRoute,
  revokeCollectorRoute,
  revokeKeyRoute,
  rotateKeyRoute,
} from "./routes.ts";
import {
  collectorsOverview,
  endCollector,
  revokeEnrollmentKey,
  rotateEnrollmentKey,
  zoneCollectors,
  type ZoneActor,
} from "./service.ts";

const actor = (c: Context<AppEnv>): ZoneActor => ({
  db: c.var.services.db,
  auth: c.var.auth,
  now: c.var.services.clock.now(),
});

export function registerZoneRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(dashboardCollectorsRoute, async (c) => c.json({ data: await collectorsOverview(actor(c)) }, 200));

  zonesResource.register(app);

  app.openapi(rotateKeyRoute, async (c) => {
    const { id } = c.req.valid("param");
    return c.json({ data: { zone_id: id, enrollment_key: await rotateEnrollmentKey(actor(c), id) } }, 200);
  });

  app.openapi(revokeKeyRoute, async (c) => {
    const { id } = c.req.valid("param");
    await revokeEnrollmentKey(actor(c), id);
    return c.json({ message: `Zone ${id}'s enrollment key revoked` }, 200);
  });

  app.openapi(listCollectorsRoute, async (c) =>
    c.json({ data: await zoneCollectors(actor(c), c.req.valid("param").id) }, 200),
  );

  app.openapi(revokeCollectorRoute, async (c) => {
    const { id, collector_id } = c.req.valid("param");
    await endCollector(actor(c), id, collector_id, "revoke");
    return c.json({ message: `Remote collector ${collector_id} revoked` }, 200);
  });
  app.openapi(deleteCollectorRoute, async (c) => {
    const { id, collector_id } = c.req.valid("param");
    await endCollector(actor(c), id, collector_id, "delete");
    return c.json({ message: `Remote collector ${collector_id} deleted` }, 200);
  });
}

import { Hono } from "hono";
import type { Db } from "../src/db/client.ts";
import { listEnvelope, parseListQuery } from "../src/platform/http/list.ts";
import { decorateDevices } from "../src/adapters/compat/rconfig/devices.ts";
import { withPaginator } from "../src/adapters/compat/rconfig/envelope.ts";
import { deviceListSpec, listDevices } from "../src/modules/devices/service.ts";

/**
 * The floor the real app is measured against: the same list query, envelope and JSON encoding as the devices
 * list handler, with nothing in front of it (no services middleware, token, rate limit, ability, zod query
 * validation or OpenAPI wrapper). The app/baseline ratio is what that machinery costs.
 */
export function createBaselineApp(db: Db): Hono {
  const app = new Hono();
  app.get("/api/v1/devices", async (c) => {
    const q = parseListQuery(c, deviceListSpec);
    const { total, rows } = await listDevices(db, { all: true }, q);
    const body = listEnvelope(c, q, total, rows);
    return c.json(withPaginator(c, { ...body, data: await decorateDevices(db, rows) }), 200);
  });
  return app;
}

import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { listEnvelope, parseListQuery } from "../../platform/http/list.ts";
import { answerJob } from "../jobs/index.ts";
import * as routes from "./routes.ts";
import {
  adoptAll,
  adoptOne,
  createPreset,
  deletePreset,
  ignoreOne,
  listCandidates,
  listPresets,
  refuseScoped,
  runPreset,
  requestDiscovery,
  serializeCandidate,
  serializePreset,
} from "./service.ts";

/** Registers discovery's routes; before the devices' routes, so /devices/discover is not read as a device id. */
export function registerDiscoveryRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(routes.discoverRoute, async (c) => {
    const { db, clock } = c.var.services;
    const job = await requestDiscovery(db, c.var.auth, c.req.valid("json"), clock.now());
    return answerJob(c, job, c.req.valid("query").wait ?? 0);
  });
  app.openapi(routes.listCandidatesRoute, async (c) => {
    refuseScoped(c.var.auth);
    const q = parseListQuery(c, routes.candidateListSpec);
    const { total, rows } = await listCandidates(c.var.services.db, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });
  app.openapi(routes.adoptAllRoute, async (c) => {
    const { db, clock } = c.var.services;
    const adopted = await adoptAll(db, c.var.auth, clock.now());
    if (adopted.length) c.var.services.jobsQueued();
    return c.json(
      {
        data: adopted.map(serializeCandidate),
        message: `${adopted.length} candidates adopted; their backups are queued`,
      },
      200,
    );
  });
  app.openapi(routes.adoptCandidateRoute, async (c) => {
    const { db, clock } = c.var.services;
    const candidate = await adoptOne(db, c.var.auth, c.req.valid("param").id, clock.now());
    c.var.services.jobsQueued();
    return c.json({ data: serializeCandidate(candidate) }, 200);
  });
  app.openapi(routes.ignoreCandidateRoute, async (c) => {
    const { db, clock } = c.var.services;
    return c.json(
      { data: serializeCandidate(await ignoreOne(db, c.var.auth, c.req.valid("param").id, clock.now())) },
      200,
    );
  });
  app.openapi(routes.listPresetsRoute, async (c) => {
    refuseScoped(c.var.auth);
    const rows = await listPresets(c.var.services.db);
    return c.json({ data: rows.map(serializePreset) }, 200);
  });
  app.openapi(routes.createPresetRoute, async (c) => {
    const { db, clock } = c.var.services;
    const row = await createPreset(db, c.var.auth, c.req.valid("json"), clock.now());
    c.header("Location", new URL(`${c.req.path}/${row.id}`, c.req.url).toString());
    return c.json({ data: serializePreset(row) }, 201);
  });
  app.openapi(routes.deletePresetRoute, async (c) => {
    const { db, clock } = c.var.services;
    await deletePreset(db, c.var.auth, c.req.valid("param").id, clock.now());
    return c.json({ message: "Scan preset deleted" }, 200);
  });
  app.openapi(routes.runPresetRoute, async (c) => {
    const { db, clock } = c.var.services;
    const job = await runPreset(db, c.var.auth, c.req.valid("param").id, clock.now());
    return answerJob(c, job, c.req.valid("query").wait ?? 0);
  });
}

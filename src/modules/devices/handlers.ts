import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../platform/http/env.ts";
import { answerJob, serializeJob } from "../jobs/index.ts";
import { plural } from "../../kernel/words.ts";
import { listEnvelope, parseListQuery } from "../../platform/http/list.ts";
import * as routes from "./routes.ts";
import {
  createDevices,
  deleteDevices,
  deviceListSpec,
  deviceSummary,
  getDevice,
  listDevices,
  setDevicesEnabled,
  updateDevices,
  type WriteContext,
} from "./service.ts";
import { parseCsvTable } from "./csv.ts";
import { MAX_IMPORT_ROWS, planCsvImport, readCsvUpload } from "./csv-import.ts";
import { exportStream } from "./export.ts";
import { applyImport } from "./import-apply.ts";
import { resetHostKey } from "./host-key.ts";
import { requestDetect } from "./detect.ts";
import { missingTemplateWarning } from "./template-warning.ts";
import { failureTranscript, lastFailedDownload } from "./last-failure.ts";

const writeContext = (c: Context<AppEnv>): WriteContext => ({
  db: c.var.services.db,
  secrets: c.var.services.secrets,
  actor: c.var.auth,
  scope: c.var.auth.scope,
  abilities: c.var.auth.abilities,
  now: c.var.services.clock.now(),
});

/** Static paths (export, import, bulk, search, summary) are registered before /devices/{id} so they are not read as ids. */
export function registerDeviceRoutes(app: OpenAPIHono<AppEnv>, options: { summary: boolean }) {
  app.openapi(routes.exportDevicesRoute, async (c) => {
    const format = c.req.valid("query").format ?? "csv";
    const q = parseListQuery(c, deviceListSpec);
    const body = await exportStream(c.var.services.db, c.var.auth.scope, q, format);
    const date = c.var.services.clock.now().toISOString().slice(0, 10);
    return c.body(body, 200, {
      "Content-Type": format === "csv" ? "text/csv; charset=utf-8" : "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="devices-${date}.${format}"`,
    });
  });

  app.openapi(routes.importDevicesRoute, async (c) => {
    const dryRun = c.req.valid("query").dry_run === "true";
    const table = parseCsvTable(await readCsvUpload(c.req.raw), MAX_IMPORT_ROWS);
    const ctx = writeContext(c);
    const planned = await planCsvImport(ctx.db, ctx.scope, table);
    return c.json({ data: await applyImport(ctx, planned, { dryRun }) }, 200);
  });

  app.openapi(routes.resetHostKeyRoute, async (c) => {
    const body = (c.req.valid("json") ?? {}) as z.infer<typeof routes.HostKeyResetInput>;
    const { db, clock } = c.var.services;
    const data = await resetHostKey(db, c.var.auth, c.req.valid("param").id, body.fingerprint ?? null, clock.now());
    return c.json({ data }, 200);
  });

  app.openapi(routes.detectDeviceRoute, async (c) => {
    const apply = ((c.req.valid("json") ?? {}) as { apply?: boolean }).apply ?? false;
    const { db, clock } = c.var.services;
    const job = await requestDetect(db, c.var.auth, c.req.valid("param").id, apply, clock.now());
    return answerJob(c, job, c.req.valid("query").wait ?? 0);
  });

  app.openapi(routes.lastFailureRoute, async (c) => {
    const job = await lastFailedDownload(c.var.services.db, c.var.auth.scope, c.req.valid("param").id);
    return c.json(
      {
        data: {
          job_id: job.id,
          outcome: job.outcome!,
          message: job.message,
          finished_at: job.finishedAt?.toISOString() ?? null,
          ...failureTranscript(job),
          status_url: serializeJob(c, job).status_url,
        },
      },
      200,
    );
  });

  app.openapi(routes.listDevicesRoute, async (c) => {
    const q = parseListQuery(c, deviceListSpec);
    const { total, rows } = await listDevices(c.var.services.db, c.var.auth.scope, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });

  app.openapi(routes.searchDevicesRoute, async (c) => {
    const term = c.req.valid("query").q;
    const q = parseListQuery(c, deviceListSpec, [deviceListSpec.search!.build(term)]);
    const { total, rows } = await listDevices(c.var.services.db, c.var.auth.scope, q);
    return c.json(listEnvelope(c, q, total, rows), 200);
  });

  if (options.summary) {
    app.openapi(routes.deviceSummaryRoute, async (c) =>
      c.json({ data: await deviceSummary(c.var.services.db, c.var.auth.scope) }, 200),
    );
  }

  app.openapi(routes.bulkCreateDevicesRoute, async (c) => {
    const data = await createDevices(writeContext(c), c.req.valid("json").devices, true);
    return c.json({ data }, 201);
  });

  app.openapi(routes.bulkUpdateDevicesRoute, async (c) => {
    const data = await updateDevices(writeContext(c), c.req.valid("json").devices, false, true);
    return c.json({ data }, 200);
  });

  app.openapi(routes.bulkDeleteDevicesRoute, async (c) => {
    const n = await deleteDevices(writeContext(c), c.req.valid("json").ids, true);
    return c.json({ message: `Deleted ${plural(n, "device")}` }, 200);
  });

  app.openapi(routes.bulkEnableDevicesRoute, async (c) =>
    c.json({ data: await setDevicesEnabled(writeContext(c), c.req.valid("json").ids, true, true) }, 200),
  );

  app.openapi(routes.bulkDisableDevicesRoute, async (c) =>
    c.json({ data: await setDevicesEnabled(writeContext(c), c.req.valid("json").ids, false, true) }, 200),
  );

  app.openapi(routes.createDeviceRoute, async (c) => {
    const [device] = await createDevices(writeContext(c), [c.req.valid("json")], false);
    c.header("Location", new URL(`${c.req.path}/${device!.id}`, c.req.url).toString());
    const warning = await missingTemplateWarning(c.var.services.db, device!);
    return c.json({ data: device!, ...(warning ? { warnings: [warning] } : {}) }, 201);
  });

  app.openapi(routes.getDeviceRoute, async (c) =>
    c.json({ data: await getDevice(c.var.services.db, c.var.auth.scope, c.req.valid("param").id) }, 200),
  );

  app.openapi(routes.replaceDeviceRoute, async (c) => {
    const [device] = await updateDevices(
      writeContext(c),
      [{ ...c.req.valid("json"), id: c.req.valid("param").id }],
      true,
      false,
    );
    return c.json({ data: device! }, 200);
  });

  app.openapi(routes.patchDeviceRoute, async (c) => {
    const [device] = await updateDevices(
      writeContext(c),
      [{ ...c.req.valid("json"), id: c.req.valid("param").id }],
      false,
      false,
    );
    return c.json({ data: device! }, 200);
  });

  app.openapi(routes.deleteDeviceRoute, async (c) => {
    const id = c.req.valid("param").id;
    await deleteDevices(writeContext(c), [id], false);
    return c.json({ message: `Device ${id} deleted` }, 200);
  });

  app.openapi(routes.enableDeviceRoute, async (c) => {
    const [device] = await setDevicesEnabled(writeContext(c), [c.req.valid("param").id], true, false);
    return c.json({ data: device! }, 200);
  });

  app.openapi(routes.disableDeviceRoute, async (c) => {
    const [device] = await setDevicesEnabled(writeContext(c), [c.req.valid("param").id], false, false);
    return c.json({ data: device! }, 200);
  });
}

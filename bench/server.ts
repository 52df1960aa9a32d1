import { serve } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import { createApp } from "../src/app.ts";
import { openSecretBox } from "../src/runtime/bootstrap.ts";
import { loadConfig } from "../src/kernel/config.ts";
import { openDatabase } from "../src/db/client.ts";
import { createBaselineApp } from "./baseline.ts";

/**
 * One server under test, in its own process so the load generator gets the other core and a CPU profile
 * covers the server alone. `app` is the real createApp() as main.ts serves it; `baseline` the bare handler.
 * Reports its port over IPC; stops on SIGTERM.
 */
const kind = process.argv[2];
if (kind !== "app" && kind !== "baseline") throw new Error(`usage: server.ts app|baseline, got '${kind}'`);

const config = loadConfig(process.env);
const { db, client } = await openDatabase(config.databaseUrl);
const app =
  kind === "app"
    ? createApp({
        db,
        config,
        secrets: await openSecretBox(config.appKey!),
        clientIp: (c) => getConnInfo(c).remote.address,
      })
    : createBaselineApp(db);

const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) =>
  process.send!({ port: info.port }),
);
process.on("SIGTERM", () => {
  // process.exit (not a kill) lets --cpu-prof write its profile.
  setTimeout(() => process.exit(0), 2000).unref();
  server.close(() => {
    client.close();
    process.exit(0);
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { createHmac } from "node:crypto";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../src/db/client.ts";
import { issueToken } from "../src/platform/auth/tokens.ts";
import { users } from "../src/db/schema/index.ts";
import { freePort, start, stopGroup, waitForHttp, type Spawned } from "./helpers/process.ts";
import { until } from "./helpers/until.ts";

/** As long as a process needs to start on a loaded machine: 300 tries 100 ms apart, 30 s or more. */
const processPatience = { tries: 300, everyMs: 100 };

const dirs: string[] = [];
const running: Spawned[] = [];
afterAll(() => {
  running.forEach((s) => stopGroup(s, "SIGKILL"));
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

/** Polls until `done` holds, up to a generous bound. */
describe("webhook delivery across processes", () => {
  it("two API processes and two collectors on one database deliver each event exactly once", {
    timeout: 120_000,
  }, async () => {
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end("ok");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const storage = mkdtempSync(join(tmpdir(), "netkeep-hooks-"));
      dirs.push(storage);
      const ports = [await freePort(), await freePort()];
      const env = (port: number) => ({
        STORAGE_DIR: storage,
        PORT: String(port),
        HOST: "127.0.0.1",
        APP_KEY: "",
        DATABASE_URL: "",
        ADMIN_PASSWORD: "Processes-Admin-Pass-1",
        COLLECTOR: "on",
      });
      // One at a time: the first creates the database and the app key the second then finds.
      const apis: Spawned[] = [];
      for (const port of ports) {
        const api = start(process.execPath, ["--import", "tsx", "src/main.ts"], env(port));
        running.push(api);
        await waitForHttp(`http://127.0.0.1:${port}/healthz`, api);
        await until(
          "the collector to start",
          () => api.output(),
          (out) => out.includes("collector started"),
          processPatience,
        );
        apis.push(api);
      }
      const { db, client } = await openDatabase(`file:${join(storage, "netkeep.db")}`);
      const [admin] = await db.select({ id: users.id }).from(users);
      const { value: token } = await issueToken(
        db,
        { userId: admin!.id, name: "processes test", abilities: ["devices.write", "system.write"], expiresAt: null },
        new Date(),
      );
      client.close();
      const call = (port: number, path: string, body: unknown) =>
        fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
          method: "POST",
          headers: { apitoken: token, "content-type": "application/json" },
          body: JSON.stringify(body),
        });

      const hook = await call(ports[0]!, "/webhooks", {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
        event_types: ["device.created"],
      });
      expect(hook.status).toBe(201);
      const { secret } = (await hook.json()).data as { secret: string };
      const DEVICES = 30;
      for (let i = 0; i < DEVICES; i++) {
        const res = await call(ports[i % 2]!, "/devices", {
          device_name: `proc-${i}`,
          device_ip: "192.0.2.40",
          device_vendor: "Cisco",
        });
        expect(res.status).toBe(201);
      }

      await until(
        "a delivery for every device",
        () => received.length,
        (n) => n >= DEVICES,
        processPatience,
      );
      // Time for a second delivery of anything to arrive, were there one: a collector polls every second. Kept as a
      // sleep: a duplicate would come from another process's pass, and no event marks that pass from outside it.
      await new Promise((r) => setTimeout(r, 3_000));
      const ids = received.map((r) => r.headers["webhook-id"]);
      expect(received).toHaveLength(DEVICES);
      expect(new Set(ids).size).toBe(DEVICES);
      expect(new Set(received.map((r) => JSON.parse(r.body).data.device.name))).toEqual(
        new Set(Array.from({ length: DEVICES }, (_, i) => `proc-${i}`)),
      );
      for (const r of received) {
        const mac = createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64"))
          .update(`${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`)
          .digest("base64");
        expect(r.headers["webhook-signature"]).toBe(`v1,${mac}`);
      }
      for (const api of apis) stopGroup(api);
      for (const api of apis) expect(await api.exited).toBe(0);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

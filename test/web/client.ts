import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ApiVersion } from "../../src/adapters/api/versions.ts";
import { createApp } from "../../src/app.ts";
import { apiDocsFiles } from "../../src/adapters/docs/paths.ts";
import { storageApiDocsFiles } from "../../src/runtime/api-docs-files.ts";
import type { Config } from "../../src/kernel/config.ts";
import { createTestContext, TEST_PASSWORD } from "../helpers/app.ts";
import type { Clock } from "../../src/kernel/clock.ts";

export { TEST_PASSWORD };

type Fetcher = (path: string, init: RequestInit) => Promise<Response>;

/**
 * A browser-like HTTP client for the web interface: a cookie jar (names and values, honouring deletion) over
 * app.request or a real server, redirects not followed so tests see them.
 */
export function webClient(fetcher: Fetcher, defaults: Record<string, string> = {}) {
  const jar = new Map<string, string>();
  const client = {
    jar,
    async request(path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
      const headers: Record<string, string> = { ...defaults, ...init.headers };
      if (jar.size) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
      const res = await fetcher(path, { ...init, headers, redirect: "manual" });
      for (const line of res.headers.getSetCookie()) {
        const [pair, ...attrs] = line.split(";");
        const eq = pair!.indexOf("=");
        const name = pair!.slice(0, eq).trim();
        const value = pair!.slice(eq + 1).trim();
        const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "";
        if (expired) jar.delete(name);
        else jar.set(name, value);
      }
      return res;
    },
    get(path: string, headers: Record<string, string> = {}) {
      return client.request(path, { headers: { accept: "text/html", ...headers } });
    },
    postForm(path: string, fields: Record<string, string | string[]>, headers: Record<string, string> = {}) {
      const body = new URLSearchParams();
      for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
      return client.request(path, {
        method: "POST",
        body: body.toString(),
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      });
    },
    /** The CSRF token of the page at `path` (its first form). */
    async csrf(path = "/settings/restapi"): Promise<string> {
      const html = await (await client.get(path)).text();
      const token = csrfIn(html);
      if (!token) throw new Error(`no _csrf field on ${path}:\n${html.slice(0, 500)}`);
      return token;
    },
    /** Logs in through the form; returns the POST /login response. */
    async login(username: string, password = TEST_PASSWORD, headers: Record<string, string> = {}): Promise<Response> {
      const token = csrfIn(await (await client.get("/login", headers)).text());
      return client.postForm("/login", { _csrf: token ?? "", username, password }, headers);
    },
  };
  return client;
}

export type WebClient = ReturnType<typeof webClient>;

export const csrfIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1];

/** createTestContext plus an app that, like the launchers, reads generated docs from the storage dir. */
export async function createWebTestContext(options: { clock?: Clock; config?: Partial<Config> } = {}) {
  const t = await createTestContext({ clock: options.clock });
  const config = { ...t.config, ...options.config };
  const app = createApp({
    db: t.db,
    config,
    secrets: t.secrets,
    clock: t.clock,
    apiDocsFiles: storageApiDocsFiles(t.dir),
    // Tests say where a request comes from, to exercise per-address throttling.
    clientIp: (c) => c.req.header("x-test-client-ip") ?? "192.0.2.1",
  });
  const fetcher: Fetcher = async (path, init) => app.request(path, init);
  return {
    ...t,
    webApp: app,
    config,
    client: (defaults?: Record<string, string>) => webClient(fetcher, defaults),
    /** Puts a docs.md where the generator writes it. */
    writeDocs(version: ApiVersion, markdown: string) {
      const { dir, markdown: file } = apiDocsFiles(t.dir, version);
      mkdirSync(dir, { recursive: true });
      writeFileSync(file, markdown);
      return join(file);
    },
  };
}

export type WebTestContext = Awaited<ReturnType<typeof createWebTestContext>>;

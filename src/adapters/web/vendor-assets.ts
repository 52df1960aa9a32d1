import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Context, Hono } from "hono";
import { fnv1a } from "../../kernel/fnv1a.ts";
import type { WebEnv } from "./env.ts";

/**
 * The two libraries the pages use, served by netkeep itself from node_modules (no CDN; the Content-Security-Policy
 * allows nothing else): htmx for partial updates (live progress by polling a fragment), uPlot for time-series
 * charts. Read once, on first use.
 */
const VENDORED = {
  "htmx.min.js": { module: "htmx.org/dist/htmx.min.js", type: "text/javascript; charset=utf-8" },
  "uplot.min.js": { module: "uplot/dist/uPlot.iife.min.js", type: "text/javascript; charset=utf-8" },
  "uplot.min.css": { module: "uplot/dist/uPlot.min.css", type: "text/css; charset=utf-8" },
} as const;

export type VendoredFile = keyof typeof VENDORED;

const loaded = new Map<VendoredFile, { body: string; version: string }>();

function load(name: VendoredFile) {
  let file = loaded.get(name);
  if (!file) {
    const body = readFileSync(createRequire(import.meta.url).resolve(VENDORED[name].module), "utf8");
    file = { body, version: fnv1a(body).toString(36) };
    loaded.set(name, file);
  }
  return file;
}

/** The address of a vendored file, versioned by its content so browsers may keep it for good. */
export const vendoredHref = (name: VendoredFile) => `/assets/vendor/${name}?v=${load(name).version}`;

export function registerVendorAssets(web: Hono<WebEnv>): void {
  web.get("/assets/vendor/:name", (c: Context<WebEnv>) => {
    const name = c.req.param("name") as VendoredFile;
    if (!Object.hasOwn(VENDORED, name)) return c.notFound();
    c.header("Cache-Control", "public, max-age=31536000, immutable");
    c.header("Content-Type", VENDORED[name].type);
    return c.body(load(name).body);
  });
}

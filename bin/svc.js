#!/usr/bin/env node
// The console. After `npm ci` (whose prepare script builds dist/) it is the production bundle, run by plain node;
// in a checkout installed without scripts it falls back to the TypeScript source through tsx. Paths are resolved
// from this file, not the working directory, so the shim works from anywhere.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const bundle = new URL("../dist/svc.js", import.meta.url);
if (existsSync(fileURLToPath(bundle))) {
  await import(bundle.href);
} else {
  const { register } = await import("tsx/esm/api");
  register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) });
  await import(new URL("../src/cli/main.ts", import.meta.url).href);
}

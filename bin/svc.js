#!/usr/bin/env node
// The console is TypeScript run through tsx, so `npx svc` needs no build step. Paths are resolved from this
// file, not the working directory, so the shim works from anywhere.
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) });
await import(new URL("../src/cli/main.ts", import.meta.url).href);

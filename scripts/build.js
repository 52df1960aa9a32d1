// The production build: bundles the API, the collector, its store thread and the `svc` console into dist/ with
// esbuild, so a production process starts with plain `node` and no TypeScript compiler (npm start, npm run
// collector, bin/svc.js). It runs as the `prepare` script, so `npm ci` builds. Tests run the source (vitest);
// test/main.test.ts builds and starts the bundles, so a broken build fails the suite.
//
// Packages stay in node_modules (libsql's native addon, ssh2's optional one cannot be bundled). The data the
// code reads beside itself (drizzle/ migrations, collector/templates/*.yaml, compliance built-ins) is not copied:
// each module's `import.meta.url` is rewritten to its source file's place, relative to the bundle, so
// `new URL("../../drizzle", import.meta.url)` finds the same folder from dist/ as from src/. The bundle therefore
// needs the checkout's data folders beside it (the Dockerfile copies them).
import { build } from "esbuild";
import { readFile } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = resolve(root, process.argv[2] ?? "dist");

/** `import.meta.url` of a project source file, as the place that file has in the checkout, seen from the bundle. */
const sourcePlaces = {
  name: "source-places",
  setup(b) {
    b.onLoad({ filter: /\.tsx?$/ }, async (args) => {
      if (args.path.includes("/node_modules/")) return undefined;
      const contents = await readFile(args.path, "utf8");
      if (!contents.includes("import.meta.url")) return undefined;
      const fromBundle = relative(outdir, args.path).split("\\").join("/");
      return {
        contents: contents.replaceAll(
          "import.meta.url",
          `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`,
        ),
        loader: args.path.endsWith(".tsx") ? "tsx" : "ts",
      };
    });
  },
};

await build({
  absWorkingDir: root,
  entryPoints: {
    main: "src/main.ts",
    collector: "collector/main.ts",
    "store-thread": "collector/store-thread-entry.ts",
    svc: "src/cli/main.ts",
  },
  outdir,
  bundle: true,
  // One self-contained file per entry, all in outdir: the rewritten paths above are relative to that folder.
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  sourcemap: "linked",
  // src/runtime/built.ts: tells the code it runs from the bundles (which start each other without tsx).
  define: { NETKEEP_BUILT: "true" },
  plugins: [sourcePlaces],
  logLevel: "warning",
});

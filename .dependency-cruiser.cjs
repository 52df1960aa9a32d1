/**
 * The layering rule (docs/architecture.md): imports point down the layers only, there are no import cycles,
 * and a domain module is used from outside only through its index.ts. `npm test` runs it
 * (`npm run lint:deps`); a new violation fails the suite.
 *
 *   kernel    src/kernel/     clock, logger, config, errors of no layer, hashing, cron, user patterns, words
 *   db        src/db/         schema, client, migrations
 *   platform  src/platform/   auth, http toolkit, job queue, audit log, event outbox, settings, secrets, metrics
 *   modules   src/modules/*   the domain, each behind its index.ts
 *   adapters  src/adapters/   versioned API assembly, rConfig layer, web pages, API docs
 *   start-up  src/app.ts, src/main*.ts, src/runtime/, src/cli/ (the svc console), collector/ (its own process)
 *
 * Tests, their helpers and the benchmarks may reach anything: they drive the app from outside.
 */
const TESTS = [
  "(^|/)test/",
  "^bench/",
  "\\.test(-child)?\\.[cm]?[jt]sx?$",
  "(^|/)test-[^/]*$",
];

const KERNEL = "^src/kernel/";
const DB = "^src/db/";
const PLATFORM = "^src/platform/";
const MODULES = "^src/modules/";
const ADAPTERS = "^src/adapters/";
const START_UP = ["^src/[^/]+\\.tsx?$", "^src/runtime/", "^src/cli/", "^collector/"];

/** A rule: files under `from` (not tests) may not import anything under `to`. */
const below = (name, comment, from, to) => ({
  name,
  comment,
  severity: "error",
  from: { path: from, pathNot: TESTS },
  to: { path: to },
});

module.exports = {
  forbidden: [
    below("kernel-is-the-bottom", "The kernel imports nothing of the app's own.", KERNEL, [
      DB,
      PLATFORM,
      MODULES,
      ADAPTERS,
      ...START_UP,
    ]),
    below("db-above-kernel-only", "The database layer knows only the kernel.", DB, [
      PLATFORM,
      MODULES,
      ADAPTERS,
      ...START_UP,
    ]),
    below("platform-below-modules", "The platform never knows a domain module, an adapter or start-up.", PLATFORM, [
      MODULES,
      ADAPTERS,
      ...START_UP,
    ]),
    below("modules-below-adapters", "A domain module never knows an adapter or start-up.", MODULES, [
      ADAPTERS,
      ...START_UP,
    ]),
    below("adapters-below-start-up", "An adapter never knows start-up (app.ts, runtime, the console, the collector).", ADAPTERS, START_UP),
    {
      name: "module-through-index",
      comment:
        "A module uses another only through its index.ts (a lazy import() may name the file it defers). Add what you need to that index.ts.",
      severity: "error",
      from: { path: "^src/modules/([^/]+)/", pathNot: TESTS },
      to: {
        path: MODULES,
        pathNot: ["^src/modules/$1/", "^src/modules/[^/]+/index\\.ts$"],
        dependencyTypesNot: ["dynamic-import"],
      },
    },
    {
      name: "outside-through-index",
      comment:
        "Adapters, start-up and the collector use a module only through its index.ts (a lazy import() may name the file it defers).",
      severity: "error",
      from: { pathNot: [MODULES, ...TESTS] },
      to: {
        path: MODULES,
        pathNot: ["^src/modules/[^/]+/index\\.ts$"],
        dependencyTypesNot: ["dynamic-import"],
      },
    },
    {
      name: "web-through-services",
      comment:
        "Web pages call the modules' services, as the API handlers do (same scope rules), not the database.",
      severity: "error",
      from: { path: "^src/adapters/web/", pathNot: TESTS },
      to: { path: ["^src/db/schema/", "(^|/)node_modules/drizzle-orm/"] },
    },
    {
      name: "no-cycles",
      comment:
        "No import cycles: a cycle ties its files into one and, unless it is made only of `import type`, loads them half-initialised. Type-only cycles count too: they tie the files as much.",
      severity: "error",
      from: { pathNot: TESTS },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: ["node_modules", "^dist/", "^collector/templates/", "\\.d\\.ts$"] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".cjs", ".json"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};

#!/usr/bin/env node
// Moves the source tree into its layers (docs/architecture.md) and rewrites every path that names a moved file:
// relative import/export/dynamic-import/vi.mock/new URL(..., import.meta.url) specifiers in code, repo paths in
// strings, config files and docs. Then each domain module gets its public index.ts (what the rest of the app uses
// of it) and every import from outside a module goes through it. Deterministic and re-runnable: a second run finds
// nothing to move and nothing to rewrite. It works on files it has never seen: moves are folder and file rules, and
// every specifier is resolved against its file's place before the move and recomputed from its place after.
//
//   node scripts/relayer.mjs            # move and rewrite (git mv; the index needs a clean enough work tree)
//   node scripts/relayer.mjs --dry-run  # print what it would move and how many files it would rewrite
//
// Afterwards: `npx biome format --write .` (rewritten import lines may change length), then `npm test`.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const dryRun = process.argv.includes("--dry-run");

/**
 * Where things go, first match wins (a file rule before the folder holding it). Paths are relative to the
 * checkout; a folder rule moves everything under it, whatever files it holds by then.
 */
export const MOVES = [
  // kernel: what every layer may use
  ["src/clock.ts", "src/kernel/clock.ts"],
  ["src/config.ts", "src/kernel/config.ts"],
  ["src/error-reason.ts", "src/kernel/error-reason.ts"],
  ["src/fnv1a.ts", "src/kernel/fnv1a.ts"],
  ["src/hashing.ts", "src/kernel/hashing.ts"],
  ["src/logger.ts", "src/kernel/logger.ts"],
  ["src/logger.test.ts", "src/kernel/logger.test.ts"],
  ["src/logger-human.ts", "src/kernel/logger-human.ts"],
  ["src/password-rule.ts", "src/kernel/password-rule.ts"],
  ["src/random.ts", "src/kernel/random.ts"],
  ["src/text-bytes.ts", "src/kernel/text-bytes.ts"],
  ["src/words.ts", "src/kernel/words.ts"],
  ["src/patterns", "src/kernel/patterns"],
  ["src/modules/tasks/cron.ts", "src/kernel/cron.ts"],
  ["src/modules/tasks/cron.test.ts", "src/kernel/cron.test.ts"],
  // platform: what the domain modules are built on
  ["src/auth", "src/platform/auth"],
  ["src/http", "src/platform/http"],
  ["src/jobs", "src/platform/jobs"],
  ["src/metrics", "src/platform/metrics"],
  ["src/secrets", "src/platform/secrets"],
  ["src/modules/activity/record.ts", "src/platform/audit/record.ts"],
  ["src/modules/events/catalogue.ts", "src/platform/outbox/catalogue.ts"],
  ["src/modules/events/record.ts", "src/platform/outbox/record.ts"],
  ["src/modules/events/outbox.test.ts", "src/platform/outbox/outbox.test.ts"],
  ["src/modules/settings/schema.ts", "src/platform/settings/schema.ts"],
  ["src/modules/settings/service.ts", "src/platform/settings/service.ts"],
  ["src/modules/system/heartbeats.ts", "src/platform/jobs/heartbeats.ts"],
  // the database file's backups are the database layer's
  ["src/runtime/db-backup.ts", "src/db/backup.ts"],
  // reading SSH keys is the secrets' (credentials use it)
  ["src/runtime/ssh-key.ts", "src/platform/secrets/ssh-key.ts"],
  // a snippet task's runs are the tasks module's (tasks start snippet deployments; snippets do not know tasks)
  ["src/modules/snippets/task-runs.ts", "src/modules/tasks/snippet-runs.ts"],
  // adapters: what faces the outside (HTTP API versions, rConfig's API, web pages, generated docs)
  ["src/api", "src/adapters/api"],
  ["src/compat", "src/adapters/compat"],
  ["src/web", "src/adapters/web"],
  ["src/docs", "src/adapters/docs"],
  // start-up: seeding belongs to it, not to the database layer
  ["src/db/seed.ts", "src/runtime/seed.ts"],
  ["src/bootstrap.ts", "src/runtime/bootstrap.ts"],
  // the server half of the remote collectors' protocol stores results as the collector does: start-up, beside it
  ["src/modules/collectors", "src/runtime/collector-api"],
];

const CODE_ROOTS = ["src", "collector", "test", "bench", "scripts", "bin"];
const CODE_EXT = /\.(ts|tsx|js|mjs|cjs)$/;
const TEXT_FILES = [
  "package.json",
  "tsconfig.json",
  "vitest.config.ts",
  "drizzle.config.ts",
  "Dockerfile",
  "deno.json",
  "compose.yaml",
  "README.md",
  "biome.json",
];
const TEXT_DIRS = ["docs", "deploy"];
// storage/ at the top is runtime data, never walked (walks start at the code roots); src/modules/configs/storage is code.
const SKIP_DIRS = new Set(["node_modules", "dist", ".git"]);

const abs = (p) => join(root, p);

function walk(dir, out = []) {
  if (!existsSync(abs(dir))) return out;
  for (const name of readdirSync(abs(dir)).sort()) {
    if (SKIP_DIRS.has(name)) continue;
    const p = posix.join(dir, name);
    const st = statSync(abs(p));
    if (st.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

/** A checkout path after the moves (itself when no rule covers it). */
function moved(path) {
  for (const [from, to] of MOVES) {
    if (path === from) return to;
    if (path.startsWith(`${from}/`)) return to + path.slice(from.length);
  }
  return path;
}

const isTest = (path) =>
  /(^|\/)test\//.test(path) ||
  /^bench\//.test(path) ||
  /\.test(-child)?\.[cm]?[jt]sx?$/.test(path) ||
  /(^|\/)test-[^/]*$/.test(path);

// ---- the files as they are now ----
const allFiles = walk(".").map((p) => p.replace(/^\.\//, ""));
const known = new Set(allFiles);
const knownDirs = new Set();
for (const f of allFiles) for (let d = posix.dirname(f); d !== "."; d = posix.dirname(d)) knownDirs.add(d);
// Not this script: its MOVES table names the old places on purpose.
const codeFiles = CODE_ROOTS.flatMap((r) => walk(r)).filter((p) => CODE_EXT.test(p) && p !== "scripts/relayer.mjs");

/** The checkout path a relative specifier names from `file` (a file or a folder), as it resolves now. */
function target(file, spec) {
  const base = posix.normalize(posix.join(posix.dirname(file), spec));
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`]) {
    if (known.has(candidate) || knownDirs.has(candidate)) return candidate === base ? base : candidate;
  }
  return base;
}

/** The specifier from `newFile` to `newTarget`, in the style of `spec` (./ prefix, trailing slash). */
function specifier(newFile, newTarget, spec) {
  let out = posix.relative(posix.dirname(newFile), newTarget) || ".";
  if (!out.startsWith(".")) out = `./${out}`;
  if (spec.endsWith("/") && !out.endsWith("/")) out += "/";
  return out;
}

// Every kind of relative specifier in code: static import/export (with `from` or bare), dynamic import(),
// vi.mock / vi.doMock / vi.importActual / vi.importMock / vi.unmock, and new URL("...", import.meta.url).
const SPECIFIER_PATTERNS = [
  /(\bfrom\s*)(["'])(\.{1,2}\/[^"'\n]*|\.{1,2})\2()/g,
  /(\bimport\s*)(["'])(\.{1,2}\/[^"'\n]*)\2()/g,
  /(\bimport\s*\(\s*)(["'])(\.{1,2}\/[^"'\n]*)\2()/g,
  /(\bvi\.(?:mock|doMock|unmock|doUnmock|importActual|importMock)\s*\(\s*)(["'])(\.{1,2}\/[^"'\n]*)\2()/g,
  /(\bnew URL\s*\(\s*)(["'])(\.{1,2}\/[^"'\n]*|\.{1,2})\2(\s*,\s*import\.meta\.url)/g,
];

/** Repo paths (src/..., collector/...) named in text, and src-relative ones (http/route.ts): rewritten as moved. */
const PATH_TOKEN = /(?<![\w@./-])((?:src|collector|test|bench)\/[\w./-]*[\w-]|(?:[\w-]+\/)+[\w.-]*[\w-])/g;
function rewritePathTokens(text) {
  return text.replace(PATH_TOKEN, (token) => {
    const trailing = token.endsWith("/") ? "/" : "";
    const path = token.replace(/\/$/, "");
    const full = known.has(path) || knownDirs.has(path) ? path : `src/${path}`;
    if (!(known.has(full) || knownDirs.has(full) || MOVES.some(([from]) => from === full))) return token;
    const to = moved(full);
    if (to === full) return token;
    const out = full === path ? to : to.replace(/^src\//, "");
    return out + trailing;
  });
}

// ---- rewrite each code file's specifiers from its new place ----
const newText = new Map(); // new path -> text
/** Imports from outside a module into one of its files, for its index.ts: module -> file -> names. */
const publicNames = new Map();
const importSites = []; // { newFile, newTarget, module } for rewriting through index.ts afterwards

const moduleOf = (path) => path.match(/^src\/modules\/([^/]+)\//)?.[1];

for (const file of codeFiles) {
  const text = readFileSync(abs(file), "utf8");
  const newFile = moved(file);
  let out = text;
  for (const pattern of SPECIFIER_PATTERNS) {
    out = out.replace(pattern, (_whole, before, quote, spec, after) => {
      const oldTarget = target(file, spec);
      const newTarget = moved(oldTarget);
      const wasExtensionless = oldTarget !== posix.normalize(posix.join(posix.dirname(file), spec));
      const named = wasExtensionless ? newTarget.replace(/(\/index)?\.tsx?$/, "") : newTarget;
      const next = specifier(newFile, named, spec);
      return `${before}${quote}${next}${quote}${after}`;
    });
  }
  // Repo paths in strings and comments (a test spawning src/main.ts, "see src/http/route.ts").
  out = rewritePathTokens(out);
  newText.set(newFile, out);
}

// ---- each module's public index.ts, and imports from outside through it ----
const STATIC_IMPORT =
  /(^|\n)(import|export)(\s+type)?\s*(\{[^}]*\}|\*\s+as\s+\w+|\*|[\w$]+(?:\s*,\s*\{[^}]*\})?)\s*from\s*(["'])(\.{1,2}\/[^"'\n]*)\5/g;

function namesOf(clause, wholeType) {
  const m = clause.match(/\{([^}]*)\}/);
  if (!m || /^[\w$]+\s*,/.test(clause)) return undefined; // default imports and namespaces are not named
  return m[1]
    .split(",")
    .map((n) => n.trim())
    .filter(Boolean)
    .map((n) => {
      const type = wholeType || n.startsWith("type ");
      const name = n
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)[0]
        .trim();
      return { name, type };
    });
}

for (const [newFile, text] of newText) {
  if (isTest(newFile) || (!newFile.startsWith("src/") && !newFile.startsWith("collector/"))) continue;
  const own = moduleOf(newFile);
  for (const m of text.matchAll(STATIC_IMPORT)) {
    const [, , keyword, typeOnly, clause, , spec] = m;
    const newTarget = posix.normalize(posix.join(posix.dirname(newFile), spec));
    const mod = moduleOf(newTarget);
    if (!mod || mod === own || newTarget === `src/modules/${mod}/index.ts`) continue;
    const star = /^\*/.test(clause.trim());
    const names = star ? "*" : namesOf(clause, Boolean(typeOnly));
    if (!names) {
      console.warn(`relayer: ${newFile} imports ${spec} by default; left as it is`);
      continue;
    }
    const fileInModule = `./${newTarget.slice(`src/modules/${mod}/`.length)}`;
    const byFile = publicNames.get(mod) ?? new Map();
    publicNames.set(mod, byFile);
    const entry = byFile.get(fileInModule) ?? { star: false, names: new Map() };
    byFile.set(fileInModule, entry);
    if (names === "*") entry.star = true;
    else for (const { name, type } of names) entry.names.set(name, (entry.names.get(name) ?? true) && type);
    importSites.push({ newFile, spec, mod, keyword });
  }
}

/** Names a module's index would export twice (from two files): those imports stay where they point. */
const clashes = new Map();
for (const [mod, byFile] of publicNames) {
  const from = new Map();
  for (const [file, entry] of byFile)
    for (const name of entry.names.keys()) {
      if (from.has(name) && from.get(name) !== file) {
        clashes.set(`${mod}:${name}`, true);
        console.warn(
          `relayer: modules/${mod} exports ${name} from ${from.get(name)} and ${file}; index.ts leaves it out`,
        );
      } else from.set(name, file);
    }
}

const INDEX_HEADER =
  "// The module's public surface: what the rest of the app may use. Other folders import the module only\n" +
  "// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.\n";

const indexTexts = new Map();
for (const [mod, byFile] of [...publicNames].sort(([a], [b]) => a.localeCompare(b))) {
  const path = `src/modules/${mod}/index.ts`;
  const existing = newText.get(path) ?? (known.has(path) ? readFileSync(abs(path), "utf8") : undefined);
  let text = existing ?? INDEX_HEADER;
  for (const [file, entry] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
    const quoted = JSON.stringify(file);
    if (entry.star) {
      if (!text.includes(`export * from ${quoted}`)) text += `export * from ${quoted};\n`;
      continue;
    }
    const names = [...entry.names].filter(([name]) => !clashes.has(`${mod}:${name}`));
    const missing = names.filter(
      ([name]) => !new RegExp(`\\b${name.replace(/\$/g, "\\$")}\\b`).test(text.replace(INDEX_HEADER, "")),
    );
    const values = missing
      .filter(([, type]) => !type)
      .map(([n]) => n)
      .sort();
    const types = missing
      .filter(([, type]) => type)
      .map(([n]) => n)
      .sort();
    if (values.length) text += `export { ${values.join(", ")} } from ${quoted};\n`;
    if (types.length) text += `export type { ${types.join(", ")} } from ${quoted};\n`;
  }
  indexTexts.set(path, text);
}

// Point each outside import at the index, unless one of its names clashes.
for (const [newFile, text] of newText) {
  if (isTest(newFile)) continue;
  const own = moduleOf(newFile);
  const out = text.replace(STATIC_IMPORT, (whole, lead, keyword, typeOnly, clause, quote, spec) => {
    const newTarget = posix.normalize(posix.join(posix.dirname(newFile), spec));
    const mod = moduleOf(newTarget);
    if (!mod || mod === own || newTarget === `src/modules/${mod}/index.ts`) return whole;
    if (!/^\*/.test(clause.trim())) {
      const names = namesOf(clause, Boolean(typeOnly));
      if (!names || names.some(({ name }) => clashes.has(`${mod}:${name}`))) return whole;
    }
    let next = posix.relative(posix.dirname(newFile), `src/modules/${mod}/index.ts`);
    if (!next.startsWith(".")) next = `./${next}`;
    return whole.replace(`${quote}${spec}${quote}`, `${quote}${next}${quote}`);
  });
  newText.set(newFile, out);
}
for (const [path, text] of indexTexts) newText.set(path, text);

// ---- config files and docs: repo paths as moved ----
const textFiles = [...TEXT_FILES.filter((f) => known.has(f)), ...TEXT_DIRS.flatMap((d) => walk(d))].filter(
  (f) => !CODE_EXT.test(f) || !codeFiles.includes(f),
);
const otherText = new Map();
for (const file of textFiles) {
  const text = readFileSync(abs(file), "utf8");
  let out = rewritePathTokens(text);
  if (file === "package.json") out = withDependencyRule(out);
  if (out !== text) otherText.set(file, out);
}

/** The test script checks the layering once the tree is in its layers. */
function withDependencyRule(pkgText) {
  const pkg = JSON.parse(pkgText);
  const check = "depcruise --config .dependency-cruiser.cjs src collector";
  pkg.scripts ??= {};
  pkg.scripts["lint:deps"] = check;
  const test = pkg.scripts.test ?? "";
  if (!test.includes("depcruise"))
    pkg.scripts.test = test.includes("vitest run")
      ? test.replace("vitest run", `${check} && vitest run`)
      : `${check} && ${test}`;
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

// ---- apply ----
const moves = [];
for (const [from, to] of MOVES) {
  if (!existsSync(abs(from))) continue;
  if (existsSync(abs(to)) && statSync(abs(from)).isFile())
    throw new Error(`relayer: ${to} exists already; ${from} not moved`);
  moves.push([from, to]);
}

if (dryRun) {
  for (const [from, to] of moves) console.log(`move ${from} -> ${to}`);
  let changed = 0;
  for (const [newFile, text] of newText) {
    const old = [...codeFiles].find((f) => moved(f) === newFile);
    if (!old || readFileSync(abs(old), "utf8") !== text) changed++;
  }
  console.log(
    `${changed} code files and ${otherText.size} other files would be rewritten; ${indexTexts.size} index files`,
  );
  process.exit(0);
}

const git = (...args) => execFileSync("git", args, { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
const tracked = new Set(
  execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean),
);
for (const [from, to] of moves) {
  mkdirSync(dirname(abs(to)), { recursive: true });
  // A folder merges into an existing one file by file (git mv refuses to move onto a folder).
  const files = statSync(abs(from)).isDirectory() ? walk(from) : [from];
  for (const file of files) {
    const dest = to + file.slice(from.length);
    mkdirSync(dirname(abs(dest)), { recursive: true });
    if (tracked.has(file)) git("mv", file, dest);
    else execFileSync("mv", [abs(file), abs(dest)]);
  }
  removeEmptyDirs(from);
}

/** Removes `dir` if nothing is left under it, then its parents while they are empty. */
function removeEmptyDirs(dir) {
  const prune = (d) => {
    if (!existsSync(abs(d)) || !statSync(abs(d)).isDirectory()) return;
    for (const name of readdirSync(abs(d))) prune(posix.join(d, name));
    if (readdirSync(abs(d)).length === 0) rmdirSync(abs(d));
  };
  prune(dir);
  for (let parent = posix.dirname(dir); parent !== "."; parent = posix.dirname(parent)) {
    if (!existsSync(abs(parent)) || readdirSync(abs(parent)).length > 0) break;
    rmdirSync(abs(parent));
  }
}

let written = 0;
for (const [path, text] of [...newText, ...otherText]) {
  mkdirSync(dirname(abs(path)), { recursive: true });
  const before = existsSync(abs(path)) ? readFileSync(abs(path), "utf8") : undefined;
  if (before === text) continue;
  writeFileSync(abs(path), text);
  written++;
}
const added = [...indexTexts.keys()].filter((p) => !tracked.has(p));
if (added.length) git("add", ...added);
console.log(`relayer: ${moves.length} moves, ${written} files rewritten, ${indexTexts.size} module index files`);

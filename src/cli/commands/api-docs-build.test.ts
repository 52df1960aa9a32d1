import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCaptured, svc, type SvcRun } from "../../../test/helpers/svc.ts";
import { apiDocsFiles } from "../../adapters/docs/paths.ts";

/**
 * `svc api-docs:build` as an operator runs it: a separate process per build, on temporary storage directories.
 */
const root = fileURLToPath(new URL("../../..", import.meta.url));
const shim = join(root, "bin", "svc.js");
const deno = join(root, "node_modules", ".bin", "deno");
const APP_URL = "https://netkeep.example.test";
const TIMEOUT = 60_000;

let scratch: string;
let counter = 0;
const freshStorage = () => join(scratch, `storage-${++counter}`);

const build = (storageDir: string, args: string[], env: Record<string, string> = {}) =>
  svc(["api-docs:build", ...args], { STORAGE_DIR: storageDir, APP_URL, ...env });

function expectSuccess(run: SvcRun) {
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toBe("");
}

function expectOneLineError(run: SvcRun, mentions: RegExp) {
  expect(run.code, run.stdout).toBe(1);
  expect(run.stdout).toBe("");
  expect(run.stderr).toMatch(/^svc: [^\n]+\n$/);
  expect(run.stderr).toMatch(mentions);
}

/** Every file under a directory, relative to it, sorted. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/** A file's bytes and modification time, to prove a build left it alone. */
const snapshot = (path: string) => ({ text: readFileSync(path, "latin1"), mtimeMs: statSync(path).mtimeMs });

const files = (storageDir: string, version: "v1" | "v2") => apiDocsFiles(storageDir, version);
const operationsIn = (openapiPath: string) => {
  const document = JSON.parse(readFileSync(openapiPath, "utf8")) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
};

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "netkeep-api-docs-"));
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe("svc api-docs:build", () => {
  // One storage directory built once, shared by the tests that inspect or rebuild it, like a session at the console.
  let storage: string;
  let firstBuild: Record<string, string>;
  const current = () =>
    Object.fromEntries(filesUnder(storage).map((f) => [f, readFileSync(join(storage, f), "latin1")]));

  beforeAll(async () => {
    storage = freshStorage();
    const run = await build(storage, ["--api-version=all"]);
    expectSuccess(run);
    firstBuild = current();
  }, TIMEOUT);

  it("writes each version's docs.md and openapi.json, and nothing else: not even a database", () => {
    expect(Object.keys(firstBuild)).toEqual([
      "app/api-docs/v1/docs.md",
      "app/api-docs/v1/openapi.json",
      "app/api-docs/v2/docs.md",
      "app/api-docs/v2/openapi.json",
    ]);
    for (const version of ["v1", "v2"] as const) {
      const markdown = readFileSync(files(storage, version).markdown, "utf8");
      expect(markdown.startsWith(`# REST API ${version}\n`)).toBe(true);
      expect(markdown).toContain(`## Base URL\n\n\`${APP_URL}\``);
      const headings = markdown
        .split("\n")
        .filter((l) => l.startsWith("### "))
        .map((l) => l.slice(4));
      expect(headings.sort()).toEqual(operationsIn(files(storage, version).openapi).sort());
    }
  });

  it("is deterministic: a second build elsewhere gives byte-identical files", { timeout: TIMEOUT }, async () => {
    const other = freshStorage();
    expectSuccess(await build(other, ["--api-version", "all"]));
    const again = Object.fromEntries(filesUnder(other).map((f) => [f, readFileSync(join(other, f), "latin1")]));
    expect(Object.keys(again)).toEqual(Object.keys(firstBuild));
    for (const [file, text] of Object.entries(firstBuild))
      expect(again[file] === text, `${file} differs between two builds`).toBe(true);
  });

  it("builds versions independently: --api-version=v1 does not touch v2's files", { timeout: TIMEOUT }, async () => {
    const v2 = files(storage, "v2");
    const before = [snapshot(v2.markdown), snapshot(v2.openapi)];
    rmSync(files(storage, "v1").markdown);
    const run = await build(storage, ["--api-version=v1"]);
    expectSuccess(run);
    expect(run.stdout).toMatch(/^v1: wrote [^\n]+docs\.md/);
    expect(run.stdout).not.toContain("v2");
    expect(current()["app/api-docs/v1/docs.md"] === firstBuild["app/api-docs/v1/docs.md"]).toBe(true);
    expect([snapshot(v2.markdown), snapshot(v2.openapi)]).toEqual(before);
  });

  it("leaves a failing version's file as it was and still builds the other", { timeout: TIMEOUT }, async () => {
    const v1 = files(storage, "v1");
    const v2 = files(storage, "v2");
    appendFileSync(v1.markdown, "\nstale text from an older build\n");
    const cachedV2 = readFileSync(v2.openapi, "utf8");
    const v2Markdown = snapshot(v2.markdown);
    try {
      writeFileSync(v2.openapi, cachedV2.slice(0, 1000));
      const run = await build(storage, ["--api-version=all", "--no-generate"]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^svc: api-docs:build failed for v2: \S+openapi\.json is not valid JSON; run without --no-generate to rebuild it\n$/,
      );
      expect(snapshot(v2.markdown)).toEqual(v2Markdown);
      // v1 was rendered although v2 failed.
      expect(run.stdout).toMatch(/^v1: re-rendered [^\n]+\n$/);
      expect(current()["app/api-docs/v1/docs.md"] === firstBuild["app/api-docs/v1/docs.md"]).toBe(true);

      writeFileSync(v2.openapi, readFileSync(v1.openapi));
      expectOneLineError(
        await build(storage, ["--api-version=v2", "--no-generate"]),
        /v2: .*openapi\.json describes API version 1\.0\.0, not v2/,
      );
      expect(snapshot(v2.markdown)).toEqual(v2Markdown);
      expect(filesUnder(storage).filter((f) => f.includes("tmp"))).toEqual([]);
    } finally {
      writeFileSync(v2.openapi, cachedV2);
    }
  });

  it("with --no-generate renders the cached extraction, not the code or the current APP_URL", {
    timeout: TIMEOUT,
  }, async () => {
    const v1 = files(storage, "v1");
    const cached = JSON.parse(readFileSync(v1.openapi, "utf8"));
    cached.paths["/api/v1/devices"].post.summary = "Summary read from the cache";
    writeFileSync(v1.openapi, JSON.stringify(cached, null, 2));
    const cache = snapshot(v1.openapi);

    const run = await build(storage, ["--api-version=v1", "--no-generate"], { APP_URL: "http://other.example.test" });
    expectSuccess(run);
    expect(run.stdout).toMatch(/^v1: re-rendered [^\n]+ from the cached extraction\n$/);
    const markdown = readFileSync(v1.markdown, "utf8");
    expect(markdown).toContain("### POST /api/v1/devices\n\nSummary read from the cache.");
    expect(markdown).toContain(`\`${APP_URL}\``);
    expect(markdown).not.toContain("other.example.test");
    expect(snapshot(v1.openapi)).toEqual(cache);

    // A build without the flag extracts again, and the edited summary is gone.
    expectSuccess(await build(storage, ["--api-version=v1"]));
    expect(current()).toEqual(firstBuild);
  });

  it("with --no-generate and no cached extraction fails with one line saying what to run", {
    timeout: TIMEOUT,
  }, async () => {
    const empty = freshStorage();
    const run = await build(empty, ["--api-version=v2", "--no-generate"]);
    expectOneLineError(
      run,
      /v2: no cached extraction at \S+\/app\/api-docs\/v2\/openapi\.json; run without --no-generate to create it/,
    );
    expect(filesUnder(empty)).toEqual([]);
  });

  it("refuses an unknown version or a missing --api-version", { timeout: TIMEOUT }, async () => {
    const [unknown, missing] = await Promise.all([build(storage, ["--api-version=v3"]), build(storage, [])]);
    expectOneLineError(unknown, /--api-version must be all, v1 or v2, not 'v3'/);
    expectOneLineError(missing, /needs --api-version <all\|v1\|v2>/);
  });
});

describe("svc api-docs:build side effects", () => {
  it("leaves an existing database's bytes and mtime alone, and never connects to a configured one", {
    timeout: TIMEOUT,
  }, async () => {
    const storage = freshStorage();
    expectSuccess(await svc(["migrate"], { STORAGE_DIR: storage }));
    const before = Object.fromEntries(filesUnder(storage).map((f) => [f, snapshot(join(storage, f))]));
    expect(Object.keys(before)).toContain("netkeep.db");

    expectSuccess(await build(storage, ["--api-version=all"]));
    // A libSQL server that does not exist: opening it would fail the build.
    expectSuccess(
      await build(storage, ["--api-version=v1"], { DATABASE_URL: "http://127.0.0.1:9", DATABASE_AUTH_TOKEN: "x" }),
    );

    const after = Object.fromEntries(
      filesUnder(storage)
        .filter((f) => !f.startsWith("app/api-docs/"))
        .map((f) => [f, snapshot(join(storage, f))]),
    );
    expect(after).toEqual(before);
  });

  const unshare = spawnSync("unshare", ["-rn", "true"]).status === 0;
  const noNamespace = "unshare -rn (util-linux, user namespaces) is not available to run a build without network";
  if (!unshare) {
    if (process.env.CI) it("builds without network (required in CI)", () => expect.fail(noNamespace));
    else console.warn(`\n[api-docs-build.test.ts] SKIPPED network-less build: ${noNamespace}\n`);
  }

  it.skipIf(!unshare)(
    "builds inside a network namespace with no interface up, byte-identical to a build with network",
    { timeout: TIMEOUT },
    async () => {
      const offline = freshStorage();
      const online = freshStorage();
      const env = { PATH: process.env.PATH ?? "", TMPDIR: tmpdir(), STORAGE_DIR: offline, APP_URL };
      const run = await runCaptured("unshare", ["-rn", process.execPath, shim, "api-docs:build", "--api-version=all"], {
        env,
        cwd: root,
      });
      expectSuccess(run);
      expectSuccess(await build(online, ["--api-version=all"]));
      const listed = filesUnder(online);
      expect(filesUnder(offline)).toEqual(listed);
      for (const f of listed)
        expect(readFileSync(join(offline, f), "latin1") === readFileSync(join(online, f), "latin1"), f).toBe(true);
    },
  );
});

const noDeno = existsSync(deno) ? undefined : `no deno binary at ${deno}: run npm install (deno is a devDependency)`;
if (noDeno) {
  if (process.env.CI) it("finds the deno binary (required in CI)", () => expect.fail(noDeno));
  else console.warn(`\n[api-docs-build.test.ts] SKIPPED Deno build: ${noDeno}\n`);
}

describe.skipIf(noDeno)("deno task svc:api-docs:build", () => {
  // The task grants no --allow-net, so Deno itself refuses any request the build might try.
  it("writes the same bytes as the Node build, without network permission", { timeout: 120_000 }, async () => {
    const viaDeno = freshStorage();
    const viaNode = freshStorage();
    const env = {
      ...process.env,
      NO_COLOR: "1",
      DATABASE_URL: "",
      DATABASE_AUTH_TOKEN: "",
      APP_KEY: "",
      STORAGE_DIR: viaDeno,
      APP_URL,
    };
    const run = await runCaptured(deno, ["task", "svc:api-docs:build", "--", "--api-version=all"], { env, cwd: root });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^v1: wrote .*\nv2: wrote .*\n$/);
    expectSuccess(await build(viaNode, ["--api-version=all"]));
    const listed = filesUnder(viaNode);
    expect(filesUnder(viaDeno)).toEqual(listed);
    for (const f of listed)
      expect(readFileSync(join(viaDeno, f), "latin1") === readFileSync(join(viaNode, f), "latin1"), f).toBe(true);
  });
});

describe("the spelling the spec gives, run from the application root", () => {
  // npm's own variables are dropped so that only what each spelling itself sets reaches the command.
  const cleanEnv = (storageDir: string) => ({
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))),
    NO_COLOR: "1",
    DATABASE_URL: "",
    DATABASE_AUTH_TOKEN: "",
    APP_KEY: "",
    STORAGE_DIR: storageDir,
    APP_URL,
  });
  const expectSameFilesAsNodeBuild = async (storageDir: string) => {
    const viaNode = freshStorage();
    expectSuccess(await build(viaNode, ["--api-version=all"]));
    const listed = filesUnder(viaNode);
    expect(listed).toHaveLength(4);
    expect(filesUnder(storageDir)).toEqual(listed);
    for (const f of listed)
      expect(readFileSync(join(storageDir, f), "latin1") === readFileSync(join(viaNode, f), "latin1"), f).toBe(true);
  };

  it("`npx svc svc:api-docs:build --api-version=all` builds every version", { timeout: 120_000 }, async () => {
    const storage = freshStorage();
    const run = await runCaptured("npx", ["svc", "svc:api-docs:build", "--api-version=all"], {
      env: cleanEnv(storage),
      cwd: root,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^v1: wrote .*\nv2: wrote .*\n$/);
    await expectSameFilesAsNodeBuild(storage);
  });

  it("`npm run svc:api-docs:build --api-version=all` builds every version, though npm keeps the flag for itself", {
    timeout: 120_000,
  }, async () => {
    const storage = freshStorage();
    const run = await runCaptured("npm", ["run", "--silent", "svc:api-docs:build", "--api-version=all"], {
      env: cleanEnv(storage),
      cwd: root,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^v1: wrote .*\nv2: wrote .*\n$/);
    await expectSameFilesAsNodeBuild(storage);
  });

  it("`npm run svc:api-docs:build --api-version=v1` builds only v1", { timeout: 120_000 }, async () => {
    const storage = freshStorage();
    const run = await runCaptured("npm", ["run", "--silent", "svc:api-docs:build", "--api-version=v1"], {
      env: cleanEnv(storage),
      cwd: root,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(filesUnder(storage)).toEqual(["app/api-docs/v1/docs.md", "app/api-docs/v1/openapi.json"]);
  });

  it("an npm setting of the same name is not read outside an npm script", { timeout: TIMEOUT }, async () => {
    const run = await build(freshStorage(), [], { npm_config_api_version: "all" });
    expectOneLineError(run, /needs --api-version/);
  });
});

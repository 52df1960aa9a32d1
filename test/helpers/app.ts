import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { createApp } from "../../src/app.ts";
import { openSecretBox } from "../../src/runtime/bootstrap.ts";
import { systemClock, type Clock } from "../../src/kernel/clock.ts";
import { loadConfig } from "../../src/kernel/config.ts";
import { openDatabase } from "../../src/db/client.ts";
import { migrateDatabase } from "../../src/runtime/seed.ts";
import { loadBuiltinTemplates } from "../../src/runtime/builtin-templates.ts";
import { roles, tags, users } from "../../src/db/schema/index.ts";
import { hashPassword } from "../../src/platform/auth/passwords.ts";
import { createUser } from "../../src/platform/auth/users.ts";
import { issueToken } from "../../src/platform/auth/tokens.ts";
import { ABILITIES, type Ability } from "../../src/platform/auth/abilities.ts";
import { checkAgainstContract } from "./contract.ts";
import { nameKey } from "../../src/db/name-key.ts";
import type { Logger } from "../../src/kernel/logger.ts";
import { startHranaServer } from "./hrana-server.ts";

/** The one TEST_DATABASE_URL value the helpers know: each test context behind a libSQL test server of its own. */
const TEST_SERVER = "test-server";

export const TEST_APP_KEY = "base64:" + Buffer.alloc(32, 7).toString("base64");
export const TEST_PASSWORD = "correct-horse-battery";

let passwordHash: Promise<string> | undefined;
/** Hashing at the production work factor takes ~0.2 s, so a test process hashes once. */
const testPasswordHash = () => (passwordHash ??= hashPassword(TEST_PASSWORD));

/** A movable clock for rate-limit windows and expiry. */
export function manualClock(start = new Date("2026-06-01T12:00:00Z")): Clock & { advance(ms: number): void } {
  let now = start.getTime();
  return { now: () => new Date(now), advance: (ms) => void (now += ms) };
}

/**
 * Every answer a test gets from the app, through any of its helpers, is checked against the API description.
 * Returns the unchecked request, for a test that provokes an undocumented answer on purpose (offContract).
 */
function holdToContract(app: ReturnType<typeof createApp>): typeof app.request {
  const request = app.request;
  app.request = (async (input: string | URL | Request, init?: RequestInit, ...rest: unknown[]) => {
    const response = await (request as (...args: unknown[]) => Response | Promise<Response>)(input, init, ...rest);
    const url = input instanceof Request ? new URL(input.url) : new URL(String(input), "http://localhost");
    const method = (input instanceof Request ? input.method : (init?.method ?? "GET")).toUpperCase();
    await checkAgainstContract(method, url, response);
    return response;
  }) as typeof app.request;
  return request;
}

export type RequestOptions = {
  method?: string;
  token?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  /** Why this request's answer is outside the API description on purpose; it is then not checked. */
  offContract?: string;
};

/** A fresh app on its own temporary SQLite file, plus shortcuts to make users, roles and tokens. */
export async function createTestContext(
  options: {
    rateLimitPerMinute?: number;
    clock?: Clock;
    storageDir?: string;
    /** More settings, as environment variables (METRICS_PUBLIC, LOG_LEVEL ...). */
    env?: Record<string, string>;
    /** Where the app's log lines go (silent by default). */
    logger?: Logger;
    /** What the app calls after committing jobs (src/main.ts wakes its collector); nothing by default. */
    jobsQueued?: () => void;
  } = {},
) {
  // storageDir: a directory holding a database an older release left (it is migrated, and removed on close).
  const dir = options.storageDir ?? mkdtempSync(join(tmpdir(), "netkeep-test-"));
  const clock = options.clock ?? systemClock;
  // TEST_DATABASE_URL=test-server: the database behind a libSQL server of the test's own (hrana-server.ts, on
  // the same file), so the suites run the remote database path (fetch, retries, migrations in one batch).
  const server =
    process.env.TEST_DATABASE_URL === TEST_SERVER ? await startHranaServer(join(dir, "netkeep.db")) : undefined;
  const config = loadConfig({
    STORAGE_DIR: dir,
    APP_KEY: TEST_APP_KEY,
    RATE_LIMIT_PER_MINUTE: String(options.rateLimitPerMinute ?? 100_000),
    APP_URL: "http://netkeep.test",
    DATABASE_URL: server?.url,
    ...options.env,
  });
  const { db, client, location, threadLock } = await openDatabase(config.databaseUrl);
  await migrateDatabase(location, db, clock, loadBuiltinTemplates());
  const secrets = await openSecretBox(TEST_APP_KEY);
  const app = createApp({ db, config, secrets, clock, logger: options.logger, jobsQueued: options.jobsQueued });
  const uncheckedRequest = holdToContract(app);
  let userCounter = 0;

  const ctx = {
    app,
    db,
    client,
    dir,
    config,
    secrets,
    clock,
    /** For a thread that writes to the same database (collector/store-thread.ts). */
    location,
    threadLock,

    async user(opts: { username?: string; role?: string } = {}): Promise<number> {
      const username = opts.username ?? `user${++userCounter}`;
      const { id } = await createUser(
        db,
        {
          username,
          email: `${username}@example.test`,
          roleName: opts.role ?? "admin",
          passwordHash: await testPasswordHash(),
        },
        clock.now(),
      );
      return id;
    },

    /** A custom role; tag names are created if missing. */
    async role(opts: {
      name: string;
      permissions?: readonly Ability[];
      tags?: string[];
      categoryIds?: number[];
    }): Promise<number> {
      const now = clock.now();
      const tagIds: number[] = [];
      for (const name of opts.tags ?? []) {
        await db
          .insert(tags)
          .values({ name, nameKey: nameKey(name), createdAt: now, updatedAt: now })
          .onConflictDoNothing();
        const [t] = await db
          .select({ id: tags.id })
          .from(tags)
          .where(eq(tags.nameKey, nameKey(name)));
        tagIds.push(t!.id);
      }
      const scoped = Boolean(opts.tags || opts.categoryIds);
      const [row] = await db
        .insert(roles)
        .values({
          name: opts.name,
          nameKey: nameKey(opts.name),
          permissions: [...(opts.permissions ?? ABILITIES)],
          scopeAll: !scoped,
          scopeTagIds: tagIds,
          scopeCategoryIds: opts.categoryIds ?? [],
          createdAt: now,
          updatedAt: now,
        })
        .returning({ id: roles.id });
      return row!.id;
    },

    /** A token for a new user of the given role (admin by default). */
    async token(
      abilities: readonly Ability[] = ABILITIES,
      opts: { role?: string; userId?: number; expiresAt?: Date } = {},
    ): Promise<string> {
      const userId = opts.userId ?? (await ctx.user({ role: opts.role }));
      const { value } = await issueToken(
        db,
        { userId, name: `test token ${userId}`, abilities: [...abilities], expiresAt: opts.expiresAt ?? null },
        clock.now(),
      );
      return value;
    },

    async disableUser(userId: number) {
      await db.update(users).set({ enabled: false }).where(eq(users.id, userId));
    },

    request(path: string, opts: RequestOptions = {}): Promise<Response> {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token) headers.apitoken = opts.token;
      let body: string | undefined = opts.rawBody;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers["content-type"] ??= "application/json";
      } else if (body !== undefined) headers["content-type"] ??= "application/json";
      return Promise.resolve(
        (opts.offContract ? uncheckedRequest : app.request)(path, { method: opts.method ?? "GET", headers, body }),
      );
    },

    /** The response with its JSON body parsed. */
    async call<T = any>(
      path: string,
      opts: RequestOptions = {},
    ): Promise<{ status: number; body: T; headers: Headers }> {
      const res = await ctx.request(path, opts);
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
    },

    async close() {
      client.close();
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return ctx;
}

export type TestContext = Awaited<ReturnType<typeof createTestContext>>;

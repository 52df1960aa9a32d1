import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../kernel/config.ts";
import { silentLogger } from "../kernel/logger.ts";
import { vendors } from "../db/schema/index.ts";
import { nameKey } from "../db/name-key.ts";
import { generateAppKey } from "../platform/secrets/box.ts";
import { openServices } from "./services.ts";

/**
 * A process opens the database through openServices: migrated and seeded (built-in vendors, templates, ...),
 * unless the process that started it did that just before (`prepared`: the collector an API starts).
 */

const dir = mkdtempSync(join(tmpdir(), "netkeep-services-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const config = loadConfig({ STORAGE_DIR: dir, DATABASE_URL: "", APP_KEY: generateAppKey(), COLLECTOR: "off" });

async function cisco(prepared: boolean | undefined, deleteIt: boolean) {
  const services = await openServices(config, silentLogger, undefined, prepared === undefined ? {} : { prepared });
  try {
    const where = eq(vendors.nameKey, nameKey("Cisco"));
    const found = (await services.db.select().from(vendors).where(where)).length;
    if (deleteIt) await services.db.delete(vendors).where(where);
    return found;
  } finally {
    services.client.close();
  }
}

describe("openServices", () => {
  it("seeds the built-in vendors on every open, unless the database was prepared by the process that started it", async () => {
    expect(await cisco(undefined, true)).toBe(1); // the first open migrates and seeds; then the vendor is deleted
    expect(await cisco(true, false)).toBe(0); // prepared: opened only, nothing seeded again
    expect(await cisco(false, false)).toBe(1); // an ordinary open seeds it back
  });
});

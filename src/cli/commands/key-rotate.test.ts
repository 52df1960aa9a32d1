import { chmodSync, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../app.ts";
import { openSecretBox } from "../../runtime/bootstrap.ts";
import { activityLog, credentials, users } from "../../db/schema/index.ts";
import { generateAppKey, type SecretBox } from "../../platform/secrets/box.ts";
import { encryptedColumns } from "../../platform/secrets/encrypted-columns.ts";
import { storeConfig } from "../../modules/configs/storage/store.ts";
import { testKeySets, type TestKeySet } from "../../modules/credentials/test-keys.ts";
import { createTestContext, TEST_APP_KEY, type TestContext } from "../../../test/helpers/app.ts";
import { freePort, start, stopGroup, waitForHttp } from "../../../test/helpers/process.ts";
import { svc } from "../../../test/helpers/svc.ts";

const root = fileURLToPath(new URL("../../..", import.meta.url));

let t: TestContext;
let admin: string;
let keys: TestKeySet;
let fileEnv: Record<string, string>;
const keyFile = () => join(t.dir, "app.key");
const nextFile = () => join(t.dir, "app.key.next");
const readKey = () => readFileSync(keyFile(), "utf8").trim();
const writeKey = (path: string, key: string) => {
  writeFileSync(path, key + "\n", { mode: 0o600 });
  chmodSync(path, 0o600);
};

/** What the test sent, by table.column, in the order rows were created. */
const sent = new Map<string, string[]>();
const remember = (table: string, values: Record<string, string>) => {
  for (const [column, value] of Object.entries(values))
    (sent.get(`${table}.${column}`) ?? sent.set(`${table}.${column}`, []).get(`${table}.${column}`)!).push(value);
};

/** Every `*_enc` column the live database has, found by SQLite's own catalogue rather than by the code under test. */
async function liveEncryptedColumns(): Promise<{ table: string; column: string }[]> {
  const tables = await t.db.all<{ name: string }>(
    sql`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like '__drizzle%'`,
  );
  const found: { table: string; column: string }[] = [];
  for (const { name } of tables) {
    for (const c of await t.db.all<{ name: string }>(sql`select name from pragma_table_info(${name})`))
      if (c.name.endsWith("_enc")) found.push({ table: name, column: c.name });
  }
  return found.sort((a, b) => a.table.localeCompare(b.table) || a.column.localeCompare(b.column));
}

/** Every stored ciphertext, by table.column, in row order. */
async function ciphertexts(): Promise<Map<string, string[]>> {
  const all = new Map<string, string[]>();
  for (const { table, column } of await liveEncryptedColumns()) {
    const rows = await t.db.all<{ v: string }>(
      sql`select ${sql.identifier(column)} as v from ${sql.identifier(table)} where ${sql.identifier(column)} is not null order by rowid`,
    );
    all.set(
      `${table}.${column}`,
      rows.map((r) => r.v),
    );
  }
  return all;
}

async function decryptsAllTo(box: SecretBox): Promise<Map<string, string[]>> {
  const plain = new Map<string, string[]>();
  for (const [where, values] of await ciphertexts())
    plain.set(where, await Promise.all(values.map((v) => box.decrypt(v))));
  return plain;
}

async function decryptsNone(box: SecretBox): Promise<boolean> {
  for (const values of (await ciphertexts()).values()) {
    for (const v of values)
      if (
        await box.decrypt(v).then(
          () => true,
          () => false,
        )
      )
        return false;
  }
  return true;
}

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  keys = testKeySets()[0]!;
  // File mode: the key lives in storage/app.key, as after a first start without APP_KEY.
  writeKey(keyFile(), TEST_APP_KEY);
  fileEnv = { STORAGE_DIR: t.dir };

  const credential = {
    cred_password: "rot-pw-Qe4r",
    cred_enable_password: "rot-en-Ty6u",
    ssh_key: keys.encrypted,
    ssh_key_passphrase: keys.passphrase,
    snmp_community: "rot-comm-Io8p",
    snmp_v3_auth_password: "rot-auth-As2d",
    snmp_v3_priv_password: "rot-priv-Fg3h",
  };
  const res = await t.call("/api/v1/device-credentials", {
    method: "POST",
    token: admin,
    body: {
      cred_name: "rotated",
      snmp_v3_user: "nk",
      snmp_v3_auth_protocol: "sha256",
      snmp_v3_priv_protocol: "aes",
      ...credential,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  remember("credentials", {
    password_enc: credential.cred_password,
    enable_password_enc: credential.cred_enable_password,
    ssh_key_enc: credential.ssh_key,
    ssh_key_passphrase_enc: credential.ssh_key_passphrase,
    snmp_community_enc: credential.snmp_community,
    snmp_v3_auth_password_enc: credential.snmp_v3_auth_password,
    snmp_v3_priv_password_enc: credential.snmp_v3_priv_password,
  });
  for (const [i, pw] of [
    ["rot-dev1-Jk5l", "rot-den1-Zx7c"],
    ["rot-dev2-Vb9n", "rot-den2-Mq1w"],
  ].entries()) {
    const dev = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: `rotated-dev-${i}`,
        device_ip: "192.0.2.40",
        device_vendor: "Cisco",
        device_password: pw[0],
        device_enable_password: pw[1],
      },
    });
    expect(dev.status, JSON.stringify(dev.body)).toBe(201);
    remember("devices", { password_enc: pw[0]!, enable_password_enc: pw[1]! });
  }
  const smtp = await t.call("/api/v1/settings", {
    method: "PATCH",
    token: admin,
    body: {
      smtp: { password: "rot-smtp-Hy4t" },
      ldap: {
        bind_password: "rot-ldap-Pw3e",
        directories: [{ name: "rot", enabled: false, bind_password: "rot-dir-Pw5q" }],
      },
      oidc: { client_secret: "rot-oidc-Cs8r" },
    },
  });
  expect(smtp.status, JSON.stringify(smtp.body)).toBe(200);
  remember("app_settings", {
    smtp_password_enc: "rot-smtp-Hy4t",
    ldap_bind_password_enc: "rot-ldap-Pw3e",
    oidc_client_secret_enc: "rot-oidc-Cs8r",
    ldap_directory_passwords_enc: JSON.stringify({ rot: "rot-dir-Pw5q" }),
  });
  const hook = await t.call("/api/v1/webhooks", {
    method: "POST",
    token: admin,
    body: { url: "https://hooks.example.net/rotated" },
  });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  remember("webhooks", { secret_enc: hook.body.data.secret });
  // A confirmed TOTP secret and one waiting for its first code (the second-factor pages seal both the same way).
  const mfaUser = await t.user({ username: "rotated-mfa" });
  await t.db
    .update(users)
    .set({
      totpSecretEnc: await t.secrets.encrypt("ROTTOTPSECRETAAA"),
      totpPendingEnc: await t.secrets.encrypt("ROTPENDINGSECRET"),
      oidcRefreshTokenEnc: await t.secrets.encrypt("rot-refresh-token-Rt2"),
    })
    .where(eq(users.id, mfaUser));
  remember("users", {
    totp_secret_enc: "ROTTOTPSECRETAAA",
    totp_pending_enc: "ROTPENDINGSECRET",
    oidc_refresh_token_enc: "rot-refresh-token-Rt2",
  });
});
afterAll(() => t.close());

describe("svc key:rotate", () => {
  it("knows every encrypted column the database has", async () => {
    const live = await liveEncryptedColumns();
    expect(live.length).toBeGreaterThanOrEqual(9);
    // A new *_enc column that rotation did not cover would make these differ.
    expect(encryptedColumns()).toEqual(live);
    // ...and the round trip below must have a value in each, or it would not prove that column rotates.
    expect([...(await ciphertexts()).entries()].filter(([, v]) => v.length === 0).map(([k]) => k)).toEqual([]);
  });

  it("re-encrypts every secret under a new key file atomically; the new key opens them all, the old one none", async () => {
    const before = await ciphertexts();
    expect(await decryptsAllTo(await openSecretBox(TEST_APP_KEY))).toEqual(sent);
    // A stored configuration's secrets digest is keyed from the app key: the rotation forgets it.
    const [device] = await t.db.all<{ id: number }>(sql`select id from devices where name = 'rotated-dev-0'`);
    const version = await storeConfig(t.db, {
      deviceId: device!.id,
      command: "show running-config",
      text: "hostname r\n",
      significant: (x) => x,
      trigger: "api",
      jobId: null,
      now: new Date(),
    });
    await t.db.run(sql`update configs set secrets_digest = 'digest-under-the-old-key' where id = ${version.configId}`);

    const run = await svc(["key:rotate"], fileEnv);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /Re-encrypted 19 secrets under a new app key \(app_settings: 4, credentials: 7, devices: 4, users: 3, webhooks: 1\)/,
    );
    expect(run.stdout).toContain("Restart the API and every collector");

    const newKey = readKey();
    expect(newKey).not.toBe(TEST_APP_KEY);
    expect(statSync(keyFile()).mode & 0o777).toBe(0o600);
    expect(existsSync(nextFile())).toBe(false);
    for (const secret of [TEST_APP_KEY, newKey, ...[...sent.values()].flat()])
      expect(run.stdout + run.stderr).not.toContain(secret);

    const after = await ciphertexts();
    for (const [where, values] of after) values.forEach((v, i) => expect(v, where).not.toBe(before.get(where)![i]));
    expect(await decryptsAllTo(await openSecretBox(newKey))).toEqual(sent);
    expect(await decryptsNone(await openSecretBox(TEST_APP_KEY))).toBe(true);

    // The app built with the new key reads what it stored: checking a passphrase alone decrypts the stored SSH key.
    const [{ id }] = (await t.db
      .select({ id: credentials.id })
      .from(credentials)
      .where(eq(credentials.name, "rotated"))) as [{ id: number }];
    const fresh = createApp({ db: t.db, config: t.config, secrets: await openSecretBox(newKey) });
    const check = await fresh.request(`/api/v1/device-credentials/${id}`, {
      method: "PATCH",
      headers: { apitoken: admin, "content-type": "application/json" },
      body: JSON.stringify({ ssh_key_passphrase: keys.passphrase }),
    });
    expect(check.status, await check.clone().text()).toBe(200);
    const stale = await t.call(`/api/v1/device-credentials/${id}`, {
      method: "PATCH",
      token: admin,
      body: { ssh_key_passphrase: keys.passphrase },
      offContract: "an app still on the old key fails to decrypt",
    });
    expect(stale.status).toBe(500);

    const audit = await t.db.select().from(activityLog).where(eq(activityLog.action, "app_key.rotate"));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      username: "svc key:rotate",
      changes: { secrets_reencrypted: { old: null, new: 19 } },
    });
    expect(await t.db.all(sql`select secrets_digest as digest from configs where id = ${version.configId}`)).toEqual([
      { digest: null },
    ]);
  });

  it("with the key in APP_KEY, refuses without --yes, and with it prints the new key once as the last line", async () => {
    const current = readKey();
    const env = { ...fileEnv, APP_KEY: current };
    const before = await ciphertexts();
    const refused = await svc(["key:rotate"], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(/^svc: the app key comes from APP_KEY.*--yes.*last line[^\n]*\n$/);
    expect(await ciphertexts()).toEqual(before);

    const run = await svc(["key:rotate", "--yes"], env);
    expect(run.code, run.stderr).toBe(0);
    const newKey = run.stdout.trimEnd().split("\n").at(-1)!;
    expect(newKey).toMatch(/^base64:[A-Za-z0-9+/]{43}=$/);
    expect(run.stdout.split(newKey).length - 1).toBe(1);
    expect(run.stdout).not.toContain(current);
    expect(run.stdout).toContain("Set APP_KEY to the key below");
    expect(readKey()).toBe(current);
    expect(await decryptsAllTo(await openSecretBox(newKey))).toEqual(sent);
    expect(await decryptsNone(await openSecretBox(current))).toBe(true);
    writeKey(keyFile(), newKey);
  });

  it("finishes a rotation interrupted after its commit, before app.key was replaced", async () => {
    const old = readKey();
    expect((await svc(["key:rotate"], fileEnv)).code).toBe(0);
    // The state a crash between commit and rename leaves: secrets under the new key, which is only in app.key.next.
    renameSync(keyFile(), nextFile());
    writeKey(keyFile(), old);

    const run = await svc(["key:rotate"], fileEnv);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^Finished an interrupted rotation first: .*app\.key\.next held the key the stored secrets use/,
    );
    expect(existsSync(nextFile())).toBe(false);
    expect(await decryptsAllTo(await openSecretBox(readKey()))).toEqual(sent);
  });

  it("drops a next key from a rotation that never committed, or that was only partly written", async () => {
    for (const leftover of [generateAppKey(), "base64:cGFydGlh"]) {
      const current = readKey();
      writeKey(nextFile(), leftover);
      const run = await svc(["key:rotate"], fileEnv);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(
        /^Removed .*app\.key\.next, left by an interrupted rotation that had not changed anything/,
      );
      expect(readKey()).not.toBe(current);
      expect(readKey()).not.toBe(leftover);
      expect(await decryptsAllTo(await openSecretBox(readKey()))).toEqual(sent);
    }
  });

  it("changes nothing when the current key does not open every secret, or when no key file opens them", async () => {
    const current = readKey();
    const before = await ciphertexts();
    const [{ id }] = (await t.db
      .select({ id: credentials.id })
      .from(credentials)
      .where(eq(credentials.name, "rotated"))) as [{ id: number }];
    const foreign = await (await openSecretBox(generateAppKey())).encrypt("sealed under some other key");
    const [row] = await t.db.select().from(credentials).where(eq(credentials.id, id));
    await t.db.update(credentials).set({ snmpV3PrivPasswordEnc: foreign }).where(eq(credentials.id, id));

    const run = await svc(["key:rotate"], fileEnv);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `svc: credentials.snmp_v3_priv_password_enc of row ${id} does not decrypt with the current app key; nothing was changed\n`,
    );
    expect(readKey()).toBe(current);
    expect(existsSync(nextFile())).toBe(false);
    await t.db
      .update(credentials)
      .set({ snmpV3PrivPasswordEnc: row!.snmpV3PrivPasswordEnc })
      .where(eq(credentials.id, id));
    expect(await ciphertexts()).toEqual(before);

    const strangers = [generateAppKey(), generateAppKey()];
    writeKey(keyFile(), strangers[0]!);
    writeKey(nextFile(), strangers[1]!);
    const lost = await svc(["key:rotate"], fileEnv);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(
      /neither .*app\.key nor .*app\.key\.next decrypts the stored credentials; both are left as they are/,
    );
    expect([readKey(), readFileSync(nextFile(), "utf8").trim()]).toEqual(strangers);
    rmSync(nextFile());
    writeKey(keyFile(), current);
  });

  it("on start-up, the service finishes a rotation interrupted before app.key was replaced", async () => {
    const old = readKey();
    expect((await svc(["key:rotate"], fileEnv)).code).toBe(0);
    const rotated = readKey();
    renameSync(keyFile(), nextFile());
    writeKey(keyFile(), old);

    const port = await freePort();
    const service = start(
      process.execPath,
      ["--import", "tsx", "src/main.ts"],
      {
        STORAGE_DIR: t.dir,
        PORT: String(port),
        HOST: "127.0.0.1",
        COLLECTOR: "off",
        APP_KEY: "",
        DATABASE_URL: "",
      },
      root,
    );
    try {
      await waitForHttp(`http://127.0.0.1:${port}/healthz`, service);
      expect(readKey()).toBe(rotated);
      expect(existsSync(nextFile())).toBe(false);
      expect(service.output()).toContain("finished an interrupted svc key:rotate");
      expect(service.output()).not.toContain(rotated);
    } finally {
      stopGroup(service);
      await service.exited;
    }
  });
});

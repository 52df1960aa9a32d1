import { readFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../../test/helpers/app.ts";
import { activityLog, credentials, deviceProfiles } from "../../db/schema/index.ts";
import { testKeySets, type TestKeySet } from "./test-keys.ts";
import { nameKey } from "../../db/name-key.ts";

let t: TestContext;
let admin: string;
let keySets: TestKeySet[];
let keys: TestKeySet;
/** Every response body this file receives, to prove no secret ever leaves the API. */
const responses: string[] = [];

beforeAll(async () => {
  t = await createTestContext();
  admin = await t.token();
  keySets = testKeySets();
  keys = keySets[0]!;
});
afterAll(() => t.close());

const PATH = "/api/v1/device-credentials";

async function call(path: string, opts: { method?: string; body?: unknown; token?: string } = {}) {
  const res = await t.call(path, { token: admin, ...opts });
  responses.push(JSON.stringify(res.body ?? null));
  return res;
}
const create = (body: Record<string, unknown>) => call(PATH, { method: "POST", body });
const patch = (id: number, body: Record<string, unknown>) => call(`${PATH}/${id}`, { method: "PATCH", body });
const put = (id: number, body: Record<string, unknown>) => call(`${PATH}/${id}`, { method: "PUT", body });
const row = async (id: number) => (await t.db.select().from(credentials).where(eq(credentials.id, id)))[0]!;
const open = (sealed: string | null) => (sealed === null ? null : t.secrets.decrypt(sealed));

/** Distinctive values, so finding one anywhere it should not be is unambiguous. */
const SECRET = {
  cred_password: "pw-Zq8vK3xR7mT2",
  cred_enable_password: "en-Hy4pL9wN6cJ1",
  snmp_community: "comm-Bx5tF2gV8sD4",
  snmp_v3_auth_password: "auth-Mk7rQ3nW9yE6",
  snmp_v3_priv_password: "priv-Pj2sU8hC5aX7",
};

describe("device credentials", () => {
  it("creates a set with every kind of secret, stores them encrypted with the app key and returns only has_* flags", async () => {
    const res = await create({
      cred_name: "core-routers",
      cred_description: "Backup account",
      cred_username: "backup",
      ...SECRET,
      ssh_key: keys.encrypted,
      ssh_key_passphrase: keys.passphrase,
      snmp_v3_user: "netkeep",
      snmp_v3_auth_protocol: "SHA-256",
      snmp_v3_priv_protocol: "AES-128",
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const data = res.body.data;
    expect(res.headers.get("location")).toBe(`http://localhost${PATH}/${data.id}`);
    expect(data).toEqual({
      id: data.id,
      cred_name: "core-routers",
      cred_description: "Backup account",
      cred_username: "backup",
      has_password: true,
      has_enable_password: true,
      has_ssh_key: true,
      has_ssh_key_passphrase: true,
      has_snmp_community: true,
      snmp_v3_user: "netkeep",
      snmp_v3_auth_protocol: "sha256",
      has_snmp_v3_auth_password: true,
      snmp_v3_priv_protocol: "aes",
      has_snmp_v3_priv_password: true,
      cred_discovery: false,
      devices_count: 0,
      created_at: data.created_at,
      updated_at: data.updated_at,
    });

    const stored = await row(data.id);
    expect(await open(stored.passwordEnc)).toBe(SECRET.cred_password);
    expect(await open(stored.enablePasswordEnc)).toBe(SECRET.cred_enable_password);
    expect(await open(stored.snmpCommunityEnc)).toBe(SECRET.snmp_community);
    expect(await open(stored.snmpV3AuthPasswordEnc)).toBe(SECRET.snmp_v3_auth_password);
    expect(await open(stored.snmpV3PrivPasswordEnc)).toBe(SECRET.snmp_v3_priv_password);
    expect(await open(stored.sshKeyEnc)).toBe(keys.encrypted);
    expect(await open(stored.sshKeyPassphraseEnc)).toBe(keys.passphrase);

    const shown = await call(`${PATH}/${data.id}`);
    expect(shown).toMatchObject({ status: 200, body: { data } });
  });

  it("PATCH changes only what is sent; PUT resets plain fields but keeps secrets not sent; null clears one", async () => {
    const { id } = (
      await create({
        cred_name: "edit-me",
        cred_description: "first",
        cred_username: "ops",
        cred_password: "keep-me-please",
        snmp_community: "c0mmunity-x",
      })
    ).body.data;
    const patched = await patch(id, { cred_description: "second" });
    expect(patched.body.data).toMatchObject({
      cred_description: "second",
      cred_username: "ops",
      has_password: true,
      has_snmp_community: true,
    });

    const replaced = await put(id, { cred_name: "edit-me" });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data).toMatchObject({
      cred_description: "",
      cred_username: "",
      has_password: true,
      has_snmp_community: true,
    });
    expect(await open((await row(id)).passwordEnc)).toBe("keep-me-please");

    const cleared = await put(id, { cred_name: "edit-me", cred_password: null });
    expect(cleared.body.data).toMatchObject({ has_password: false, has_snmp_community: true });
    expect((await row(id)).passwordEnc).toBeNull();
    const emptied = await patch(id, { snmp_community: "" });
    expect(emptied.body.data.has_snmp_community).toBe(false);
    const changed = await patch(id, { cred_password: "a-new-password" });
    expect(await open((await row(id)).passwordEnc)).toBe("a-new-password");
    expect(changed.body.data.has_password).toBe(true);

    const actions = (await t.db.select().from(activityLog).where(eq(activityLog.subjectId, id))).filter(
      (r) => r.subjectType === "credential set",
    );
    expect(actions.map((r) => r.action)).toEqual(["credential_set.create", ...Array(5).fill("credential_set.update")]);
    expect(actions[2]!.changes).toEqual({
      cred_description: { old: "second", new: "" },
      cred_username: { old: "ops", new: "" },
    });
    expect(actions[3]!.changes).toEqual({ has_password: { old: true, new: false } });
    expect(actions.at(-1)!.changes).toEqual({ has_password: { old: false, new: true } });
  });

  it("names are unique in any case", async () => {
    await create({ cred_name: "Unique-Set" });
    const dup = await create({ cred_name: "unique-set" });
    expect(dup.status).toBe(422);
    expect(dup.body.errors).toEqual({ cred_name: ["cred_name 'unique-set' is already taken"] });
    expect((await create({})).body.errors.cred_name).toEqual(["cred_name is required"]);
  });

  it("lists with filter, sort, search, fields and pagination; unknown names are 422", async () => {
    for (const name of ["list-a", "list-b", "list-c"])
      await create({
        cred_name: name,
        cred_username: name === "list-b" ? "svc-b" : "svc",
        snmp_community: name === "list-c" ? "listcomm1" : null,
      });
    const sorted = await call(`${PATH}?search=list-&sort=-cred_name&per_page=2&fields=id,cred_name`);
    expect(sorted.body.data.map((c: { cred_name: string }) => c.cred_name)).toEqual(["list-c", "list-b"]);
    expect(Object.keys(sorted.body.data[0])).toEqual(["id", "cred_name"]);
    expect(sorted.body.meta).toMatchObject({ total: 3, last_page: 2, per_page: 2 });
    const community = await call(`${PATH}?filter[has_snmp_community]=true&search=list-`);
    expect(community.body.data.map((c: { cred_name: string }) => c.cred_name)).toEqual(["list-c"]);
    const byUser = await call(`${PATH}?filter[cred_username]=svc-b`);
    expect(byUser.body.data.map((c: { cred_name: string }) => c.cred_name)).toEqual(["list-b"]);
    const byName = await call(`${PATH}?filter[cred_name]=LIST-A`);
    expect(byName.body.data.map((c: { cred_name: string }) => c.cred_name)).toEqual(["list-a"]);

    const bad = await call(`${PATH}?filter[password]=x&sort=secret&fields=cred_password`);
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(["fields", "filter[password]", "sort"]);
    expect((await call(`${PATH}?filter[has_ssh_key]=maybe`)).status).toBe(422);
  });

  it("needs credentials.read / credentials.write", async () => {
    const devicesOnly = await t.token(["devices.read", "devices.write"]);
    expect((await call(PATH, { token: devicesOnly })).status).toBe(403);
    const reader = await t.token(["credentials.read"]);
    expect((await call(PATH, { token: reader })).status).toBe(200);
    const refused = await call(PATH, {
      method: "POST",
      token: reader,
      body: { cred_name: "nope", cred_password: "nope-secret" },
    });
    expect(refused).toMatchObject({ status: 403, body: { message: "Invalid ability provided" } });
  });
});

describe("SSH keys", () => {
  it("accepts plain and encrypted keys in every format the machine can make", async () => {
    for (const [i, set] of keySets.entries()) {
      const plain = await create({ cred_name: `key-plain-${i}`, ssh_key: set.plain });
      expect(plain.status, `${set.format}: ${JSON.stringify(plain.body)}`).toBe(201);
      expect(plain.body.data).toMatchObject({ has_ssh_key: true, has_ssh_key_passphrase: false });
      const encrypted = await create({
        cred_name: `key-enc-${i}`,
        ssh_key: set.encrypted,
        ssh_key_passphrase: set.passphrase,
      });
      expect(encrypted.status, `${set.format}: ${JSON.stringify(encrypted.body)}`).toBe(201);
      expect(encrypted.body.data).toMatchObject({ has_ssh_key: true, has_ssh_key_passphrase: true });
    }
  });

  it("refuses a malformed key, a public key, a missing or wrong passphrase, and a passphrase without a key", async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [
        { ssh_key: "not a key at all" },
        "ssh_key",
        /^ssh_key is not a private key the SSH client can read \(.+\); paste an OpenSSH or PEM private key$/,
      ],
      [{ ssh_key: keys.plain.slice(0, keys.plain.length / 2) }, "ssh_key", /^ssh_key is not a private key/],
      [{ ssh_key: keys.publicKey }, "ssh_key", /^ssh_key is a public key; paste the private key$/],
      [{ ssh_key: keys.encrypted }, "ssh_key_passphrase", /^ssh_key_passphrase is required: the ssh_key is encrypted$/],
      [
        { ssh_key: keys.encrypted, ssh_key_passphrase: "not the passphrase" },
        "ssh_key_passphrase",
        /^ssh_key_passphrase does not decrypt the ssh_key$/,
      ],
      [{ ssh_key: keys.plain, ssh_key_passphrase: "pointless" }, "ssh_key_passphrase", /not encrypted/],
      [{ ssh_key_passphrase: "orphan-passphrase" }, "ssh_key_passphrase", /^ssh_key_passphrase needs an ssh_key/],
    ];
    for (const [i, [body, field, message]] of cases.entries()) {
      const res = await create({ cred_name: `bad-key-${i}`, ...body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual([field]);
      expect(res.body.errors[field][0]).toMatch(message);
    }
    for (const set of keySets) {
      const res = await create({
        cred_name: "bad-key-other-format",
        ssh_key: set.encrypted,
        ssh_key_passphrase: "wrong passphrase",
      });
      expect(res.body.errors, set.format).toEqual({
        ssh_key_passphrase: ["ssh_key_passphrase does not decrypt the ssh_key"],
      });
    }
  });

  it("checks a passphrase sent alone against the stored key; a new key without a passphrase clears the old one", async () => {
    const { id } = (
      await create({ cred_name: "rekeyed", ssh_key: keys.encrypted, ssh_key_passphrase: keys.passphrase })
    ).body.data;
    const wrong = await patch(id, { ssh_key_passphrase: "still not it" });
    expect(wrong.body.errors).toEqual({ ssh_key_passphrase: ["ssh_key_passphrase does not decrypt the ssh_key"] });
    expect((await patch(id, { ssh_key_passphrase: keys.passphrase })).status).toBe(200);

    const swapped = await patch(id, { ssh_key: keys.plain });
    expect(swapped.body.data).toMatchObject({ has_ssh_key: true, has_ssh_key_passphrase: false });
    expect((await row(id)).sshKeyPassphraseEnc).toBeNull();
    const removed = await patch(id, { ssh_key: null });
    expect(removed.body.data).toMatchObject({ has_ssh_key: false, has_ssh_key_passphrase: false });
  });
});

describe("SNMP", () => {
  const fails = async (body: Record<string, unknown>, field: string, message: RegExp, id?: number) => {
    const res = id
      ? await patch(id, body)
      : await create({ cred_name: `snmp-${Math.random().toString(36).slice(2)}`, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.errors[field]?.[0], JSON.stringify(res.body.errors)).toMatch(message);
  };

  it("accepts every protocol net-snmp supports, in its own names or common spellings", async () => {
    const pairs: [string, string, string, string][] = [
      ["md5", "md5", "des", "des"],
      ["SHA", "sha", "AES", "aes"],
      ["SHA1", "sha", "aes128", "aes"],
      ["SHA-224", "sha224", "AES256B", "aes256b"],
      ["sha256", "sha256", "aes-256-r", "aes256r"],
      ["SHA_384", "sha384", "aes", "aes"],
      ["sha-512", "sha512", "AES256R", "aes256r"],
    ];
    for (const [i, [auth, authWant, priv, privWant]] of pairs.entries()) {
      const res = await create({
        cred_name: `snmp-ok-${i}`,
        snmp_v3_user: "monitor",
        snmp_v3_auth_protocol: auth,
        snmp_v3_auth_password: "auth-secret-1",
        snmp_v3_priv_protocol: priv,
        snmp_v3_priv_password: "priv-secret-1",
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.data).toMatchObject({ snmp_v3_auth_protocol: authWant, snmp_v3_priv_protocol: privWant });
    }
    const noAuth = await create({ cred_name: "snmp-noauth", snmp_v3_user: "monitor" });
    expect(noAuth.body.data).toMatchObject({
      snmp_v3_user: "monitor",
      snmp_v3_auth_protocol: null,
      has_snmp_v3_auth_password: false,
    });
  });

  it("refuses protocols net-snmp lacks, short passwords, and incomplete combinations, each on its field", async () => {
    const auth = { snmp_v3_user: "monitor", snmp_v3_auth_protocol: "sha", snmp_v3_auth_password: "auth-secret-1" };
    await fails(
      { ...auth, snmp_v3_auth_protocol: "sha3" },
      "snmp_v3_auth_protocol",
      /^snmp_v3_auth_protocol 'sha3' is not supported; use one of: md5, sha, sha224, sha256, sha384, sha512$/,
    );
    await fails(
      { ...auth, snmp_v3_priv_protocol: "AES-192", snmp_v3_priv_password: "priv-secret-1" },
      "snmp_v3_priv_protocol",
      /^snmp_v3_priv_protocol 'AES-192' is not supported by the SNMP library; use one of: des, aes, aes256b, aes256r$/,
    );
    await fails(
      { ...auth, snmp_v3_priv_protocol: "AES-256", snmp_v3_priv_password: "priv-secret-1" },
      "snmp_v3_priv_protocol",
      /ambiguous: use aes256r .* or aes256b/,
    );
    await fails(
      { ...auth, snmp_v3_auth_password: "short" },
      "snmp_v3_auth_password",
      /^snmp_v3_auth_password must be at least 8 characters/,
    );
    await fails(
      { snmp_v3_user: "monitor", snmp_v3_auth_password: "auth-secret-1" },
      "snmp_v3_auth_password",
      /^snmp_v3_auth_password needs snmp_v3_auth_protocol: one of md5, /,
    );
    await fails(
      { snmp_v3_user: "monitor", snmp_v3_auth_protocol: "sha" },
      "snmp_v3_auth_protocol",
      /^snmp_v3_auth_protocol needs snmp_v3_auth_password$/,
    );
    await fails(
      { snmp_v3_auth_protocol: "sha", snmp_v3_auth_password: "auth-secret-1" },
      "snmp_v3_auth_protocol",
      /^snmp_v3_auth_protocol needs snmp_v3_user$/,
    );
    await fails(
      { snmp_v3_user: "monitor", snmp_v3_priv_protocol: "aes", snmp_v3_priv_password: "priv-secret-1" },
      "snmp_v3_priv_protocol",
      /needs snmp_v3_auth_protocol \(SNMPv3 has no privacy without authentication\)/,
    );
    await fails(
      { ...auth, snmp_v3_priv_password: "priv-secret-1" },
      "snmp_v3_priv_password",
      /^snmp_v3_priv_password needs snmp_v3_priv_protocol/,
    );
  });

  it("words a rule broken by an edit for the field the edit touched", async () => {
    const { id } = (
      await create({
        cred_name: "snmp-edit",
        snmp_v3_user: "monitor",
        snmp_v3_auth_protocol: "sha",
        snmp_v3_auth_password: "auth-secret-1",
      })
    ).body.data;
    await fails(
      { snmp_v3_auth_protocol: null },
      "snmp_v3_auth_protocol",
      /^snmp_v3_auth_protocol is required while snmp_v3_auth_password is set \(send snmp_v3_auth_password: null to clear it\)$/,
      id,
    );
    const putWithout = await put(id, { cred_name: "snmp-edit", snmp_v3_user: "monitor" });
    expect(putWithout.body.errors).toEqual({
      snmp_v3_auth_protocol: [
        "snmp_v3_auth_protocol is required while snmp_v3_auth_password is set (send snmp_v3_auth_password: null to clear it)",
      ],
    });
    const clearedBoth = await patch(id, { snmp_v3_auth_protocol: null, snmp_v3_auth_password: null });
    expect(clearedBoth.body.data).toMatchObject({
      snmp_v3_auth_protocol: null,
      has_snmp_v3_auth_password: false,
      snmp_v3_user: "monitor",
    });
  });
});

describe("delete", () => {
  it("refuses while devices use the set, naming how many; clears it from device profiles", async () => {
    const { id } = (await create({ cred_name: "in-use", cred_password: "in-use-password" })).body.data;
    const other = (await create({ cred_name: "in-use-other" })).body.data.id;
    const dev = (name: string, body: Record<string, unknown>) =>
      call("/api/v1/devices", {
        method: "POST",
        body: { device_name: name, device_ip: "192.0.2.20", device_vendor: "Cisco", ...body },
      });
    const a = (await dev("cred-user-a", { device_cred_id: id })).body.data.id;
    const b = (await dev("cred-user-b", { device_cred_id: other, device_snippet_cred_id: id })).body.data.id;
    await dev("cred-user-c", { device_cred_id: id, device_snippet_cred_id: id });
    expect((await call(`${PATH}/${id}`)).body.data.devices_count).toBe(3);

    const refused = await call(`${PATH}/${id}`, { method: "DELETE" });
    expect(refused).toMatchObject({
      status: 409,
      body: { message: `Credential set ${id} is used by 3 devices; give them other credentials first` },
    });
    const bulkRefused = await call(`${PATH}/bulk`, { method: "DELETE", body: { ids: [other, id] } });
    expect(bulkRefused.status).toBe(409);
    expect((await call(`${PATH}/${other}`)).status).toBe(200);

    const now = new Date();
    await t.db.insert(deviceProfiles).values([
      { name: "profile-primary", nameKey: nameKey("profile-primary"), credId: id, createdAt: now, updatedAt: now },
      {
        name: "profile-both",
        nameKey: nameKey("profile-both"),
        credId: id,
        snippetCredId: id,
        createdAt: now,
        updatedAt: now,
      },
    ]);
    for (const device of [a, b]) await call(`/api/v1/devices/${device}`, { method: "DELETE" });
    const last = (await call(`/api/v1/devices?filter[device_cred_id]=${id}`)).body.data[0].id;
    expect((await call(`${PATH}/${id}`, { method: "DELETE" })).body.message).toBe(
      `Credential set ${id} is used by 1 device; give it other credentials first`,
    );
    await call(`/api/v1/devices/${last}`, { method: "PATCH", body: { device_cred_id: 0, device_snippet_cred_id: 0 } });

    const deleted = await call(`${PATH}/${id}`, { method: "DELETE" });
    expect(deleted).toMatchObject({
      status: 200,
      body: { message: `Credential set ${id} deleted; cleared from 2 device profiles` },
    });
    const profiles = await t.db.select().from(deviceProfiles);
    expect(profiles.filter((p) => p.credId === id || p.snippetCredId === id)).toEqual([]);
    expect((await call(`${PATH}/${id}`)).status).toBe(404);
  });

  it("bulk deletes all or nothing", async () => {
    const x = (await create({ cred_name: "bulk-x" })).body.data.id;
    const y = (await create({ cred_name: "bulk-y" })).body.data.id;
    const bad = await call(`${PATH}/bulk`, { method: "DELETE", body: { ids: [x, 999999] } });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors)).toEqual(["ids.1"]);
    expect((await call(`${PATH}/${x}`)).status).toBe(200);
    expect((await call(`${PATH}/bulk`, { method: "DELETE", body: { ids: [x, y] } })).body.message).toBe(
      "Deleted 2 credential sets",
    );
  });
});

describe("secrets at rest", () => {
  it("appear nowhere in clear: not in the database file, the activity log, or any API response", async () => {
    const later = { cred_password: "pw-later-Wd3kS9", snmp_v3_priv_password: "priv-later-Rf6tY1" };
    const { id } = (
      await create({
        cred_name: "at-rest",
        ...SECRET,
        ssh_key: keys.encrypted,
        ssh_key_passphrase: keys.passphrase,
        snmp_v3_user: "netkeep",
        snmp_v3_auth_protocol: "sha512",
        snmp_v3_priv_protocol: "aes256r",
      })
    ).body.data;
    await put(id, {
      cred_name: "at-rest",
      ...later,
      snmp_v3_user: "netkeep",
      snmp_v3_auth_protocol: "sha512",
      snmp_v3_priv_protocol: "aes256r",
    });
    await patch(id, { cred_description: "touched" });
    await call("/api/v1/devices", {
      method: "POST",
      body: {
        device_name: "at-rest-device",
        device_ip: "192.0.2.30",
        device_vendor: "Cisco",
        device_password: "devpw-Gh5jK8",
        device_enable_password: "deven-Lm2nB4",
      },
    });

    // The longest line of each private key's body: distinctive, and present if the key were stored as is.
    const keyLines = keySets.flatMap((s) =>
      [s.encrypted, s.plain].map((k) => k.split("\n").sort((x, y) => y.length - x.length)[0]!),
    );
    const values = [
      ...Object.values(SECRET),
      ...Object.values(later),
      keys.passphrase,
      keys.encrypted,
      "devpw-Gh5jK8",
      "deven-Lm2nB4",
      ...keyLines,
    ];

    await t.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const file = readFileSync(join(t.dir, "netkeep.db")).toString("latin1");
    expect(file).toContain("at-rest-device");
    const audit = JSON.stringify(await t.db.select().from(activityLog));
    expect(audit).toContain("at-rest");
    const answers = responses.join("\n");
    for (const value of values) {
      expect(file.includes(value), `database file holds ${value.slice(0, 12)}...`).toBe(false);
      expect(audit.includes(value), `activity log holds ${value.slice(0, 12)}...`).toBe(false);
      expect(answers.includes(value), `a response holds ${value.slice(0, 12)}...`).toBe(false);
    }
  });
});

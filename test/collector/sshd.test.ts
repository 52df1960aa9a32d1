import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devices } from "../../src/db/schema/index.ts";
import { normalizeConfigText } from "../../src/modules/configs/storage/text.ts";
import { createTestContext, type TestContext } from "../helpers/app.ts";
import { builtinTemplateId, downloadOnce, latestConfigs } from "../helpers/collector.ts";
import {
  createTestUser,
  generateKeyPair,
  randomPassword,
  removeTestUser,
  sshdUnavailable,
  startSshd,
  type KeyPair,
  type KeyType,
  type Sshd,
} from "../helpers/sshd.ts";

/**
 * The collector against a real OpenSSH server on loopback, with the built-in linux-generic template: password
 * and key logins, host key pinning, and an sshd that speaks only algorithms old network gear uses.
 */

const USER = "netkeep-sshd-test";
// The built-in template's command; the expected output is what this machine's own shell prints for it.
const COMMAND = "cat /etc/os-release";
const expectedOutput = () => normalizeConfigText(execFileSync("/bin/sh", ["-c", COMMAND], { encoding: "utf8" }));

/**
 * sshd servers restricted to what old gear speaks, one per old key exchange that algorithmsFor() in
 * collector/transports/ssh.ts appends, all still compiled into Debian 12's OpenSSH 9.2 (`ssh -Q kex|cipher|mac|key`).
 * `login` is how the device logs in.
 */
type LegacyProfile = {
  name: string;
  hostKeyType: KeyType;
  login: "password" | "rsa key";
  kex: string;
  cipher: string;
  mac: string;
  hostKey: string;
  /** More sshd_config lines. */
  extra: Record<string, string>;
};

const LEGACY_PROFILES: LegacyProfile[] = [
  {
    name: "SHA-1 key exchange, AES-256-CBC, RSA host key",
    hostKeyType: "rsa",
    login: "rsa key",
    kex: "diffie-hellman-group14-sha1",
    cipher: "aes256-cbc",
    mac: "hmac-sha1",
    hostKey: "ssh-rsa",
    // Added, not alone: sshd's server-sig-algs lists rsa-sha2-* whatever this says, so clients (OpenSSH's own
    // too) sign with rsa-sha2-256 and an "ssh-rsa"-only list refuses every RSA key. Old devices send no
    // server-sig-algs at all, and then ssh2 signs with ssh-rsa.
    extra: { PubkeyAcceptedAlgorithms: "+ssh-rsa" },
  },
  {
    // AES-128: with AES-256 the client asks for an 8192-bit group, whose prime Node spends most of a minute
    // checking (see algorithmsFor in collector/transports/ssh.ts); 3072 bits take a few seconds.
    name: "SHA-1 group exchange, AES-128-CBC",
    hostKeyType: "rsa",
    login: "password",
    kex: "diffie-hellman-group-exchange-sha1",
    cipher: "aes128-cbc",
    mac: "hmac-sha1",
    hostKey: "ssh-rsa",
    extra: {},
  },
  {
    name: "1024-bit group, 3DES, HMAC-MD5, DSA host key",
    hostKeyType: "dsa",
    login: "password",
    kex: "diffie-hellman-group1-sha1",
    cipher: "3des-cbc",
    mac: "hmac-md5",
    hostKey: "ssh-dss",
    extra: {},
  },
];

const unavailable = sshdUnavailable();
if (unavailable) {
  if (process.env.CI) it("runs the real-sshd tests (required in CI)", () => expect.fail(unavailable));
  else console.warn(`test/collector/sshd.test.ts skipped: ${unavailable}`);
}

describe.skipIf(unavailable)("collector against OpenSSH sshd (openssh-server)", () => {
  let t: TestContext;
  let admin: string;
  let keyDir: string;
  let password: string;
  let ed25519: KeyPair;
  let rsa: KeyPair;
  let modern: Sshd | undefined;
  let linuxGeneric: number;

  beforeAll(async () => {
    password = randomPassword();
    createTestUser(USER, password);
    keyDir = mkdtempSync(join(tmpdir(), "netkeep-sshd-keys-"));
    ed25519 = generateKeyPair(join(keyDir, "id_ed25519"), "ed25519");
    rsa = generateKeyPair(join(keyDir, "id_rsa"), "rsa");
    modern = await startSshd({ user: USER, authorizedKeys: [ed25519.publicKey] });
    t = await createTestContext();
    admin = await t.token();
    linuxGeneric = await builtinTemplateId(t, "linux-generic");
  });

  afterAll(async () => {
    await modern?.stop();
    await t?.close();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
    removeTestUser(USER);
  });

  const createDevice = async (
    name: string,
    server: Sshd,
    login: Record<string, unknown>,
    templateId = linuxGeneric,
  ): Promise<number> => {
    const res = await t.call("/api/v1/devices", {
      method: "POST",
      token: admin,
      body: {
        device_name: name,
        device_ip: server.host,
        device_vendor: "Cisco",
        device_port_override: server.port,
        device_template_id: templateId,
        ...login,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id;
  };

  const createKeyCredential = async (name: string, key: KeyPair): Promise<number> => {
    const res = await t.call("/api/v1/device-credentials", {
      method: "POST",
      token: admin,
      body: { cred_name: name, cred_username: USER, ssh_key: key.privateKey },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id;
  };

  const pinned = async (deviceId: number) =>
    (await t.db.select({ fp: devices.hostKeyFingerprint }).from(devices).where(eq(devices.id, deviceId)))[0]!.fp;

  /** The job's own words, with what sshd logged, so a failure here says why. */
  const why = (job: { outcome: string | null; message: string | null }, server?: Sshd) =>
    `${job.outcome}: ${job.message}\n--- sshd said:\n${server?.output().slice(-2000) ?? ""}`;

  it("logs in with a password, stores exactly what the command prints, pins the host key, then finds it unchanged", async () => {
    const id = await createDevice("sshd-password", modern!, { device_username: USER, device_password: password });

    const first = await downloadOnce(t, id);
    expect(first.outcome, why(first, modern)).toBe("success");
    expect(Object.fromEntries(await latestConfigs(t, id))).toEqual({ [COMMAND]: expectedOutput() });
    expect(await pinned(id)).toBe(modern!.hostKeyFingerprint);

    const second = await downloadOnce(t, id);
    expect(second.outcome, why(second, modern)).toBe("unchanged");
  });

  it("logs in with an ed25519 key from a credential set", async () => {
    const credId = await createKeyCredential("sshd-ed25519", ed25519);
    const id = await createDevice("sshd-key", modern!, { device_cred_id: credId });

    const job = await downloadOnce(t, id);
    expect(job.outcome, why(job, modern)).toBe("success");
    expect(Object.fromEntries(await latestConfigs(t, id))).toEqual({ [COMMAND]: expectedOutput() });
    expect(modern!.output()).toContain(`Accepted publickey for ${USER} from 127.0.0.1 port `);
    expect(modern!.output()).toContain(`ssh2: ED25519 ${ed25519.fingerprint}`);
  });

  it("reports a wrong password as auth_failed, and the password is nowhere in the job", async () => {
    const wrong = `wrong-${randomPassword()}`;
    const id = await createDevice("sshd-wrong-password", modern!, { device_username: USER, device_password: wrong });

    const job = await downloadOnce(t, id);
    expect(job.outcome, why(job, modern)).toBe("auth_failed");
    expect(JSON.stringify(job)).not.toContain(wrong);
    expect(await latestConfigs(t, id)).toEqual(new Map());
  });

  /** A user template running its commands on exec channels (POST /api/v1/templates with the YAML). */
  const execTemplate = async (name: string, commands: string[]): Promise<number> => {
    const code = [
      "vendor: Linux",
      "description: Linux host over SSH exec channels",
      "exec: true",
      "commands:",
      ...commands.map((c) => `  - ${JSON.stringify(c)}`),
      "",
    ].join("\n");
    const res = await t.call("/api/v1/templates", { method: "POST", token: admin, body: { name, code } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id;
  };

  it("fetches a file over SCP (the sshd's own scp as the source), byte for byte, and reports a missing one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "netkeep-scp-"));
    try {
      chmodSync(dir, 0o755);
      // Larger than SSH's initial window, multi-byte text throughout: flow control and split characters.
      const lines = Array.from({ length: 6000 }, (_, i) => `Setting${i}=Zürich – ${"x".repeat(40)}`);
      writeFileSync(join(dir, "config.ini"), lines.join("\r\n") + "\r\n", { mode: 0o644 });
      const code = `exec: true\ncommands:\n  - scp: ${dir}/config.ini\n  - {scp: ${dir}/missing.ini, optional: true}\n`;
      const created = await t.call("/api/v1/templates", {
        method: "POST",
        token: admin,
        body: { name: "scp-sshd", code },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const id = await createDevice(
        "sshd-scp",
        modern!,
        { device_username: USER, device_password: password },
        created.body.data.id,
      );

      const job = await downloadOnce(t, id);
      expect(job.outcome, why(job, modern)).toBe("success");
      expect(Object.fromEntries(await latestConfigs(t, id))).toEqual({
        [`scp ${dir}/config.ini`]: lines.join("\n") + "\n",
      });
      expect(job.result).toMatchObject({
        skipped_commands: [
          { command: `scp ${dir}/missing.ini`, reason: expect.stringContaining("No such file or directory") },
        ],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs commands on exec channels with a user template", async () => {
    const templateId = await execTemplate("linux-exec", [COMMAND, "id -un"]);
    const id = await createDevice(
      "sshd-exec",
      modern!,
      { device_username: USER, device_password: password },
      templateId,
    );

    const job = await downloadOnce(t, id);
    expect(job.outcome, why(job, modern)).toBe("success");
    expect(Object.fromEntries(await latestConfigs(t, id))).toEqual({
      [COMMAND]: expectedOutput(),
      "id -un": `${USER}\n`,
    });
  });

  it("stores nothing when an exec command fails or its connection is cut mid-output", async () => {
    const missing = "/nonexistent-netkeep-file";
    let status = 0;
    let stderr = "";
    try {
      execFileSync("cat", [missing], { stdio: "pipe" });
    } catch (err) {
      ({ status, stderr } = err as { status: number; stderr: string });
    }
    expect(status).not.toBe(0);
    const failing = await createDevice(
      "sshd-exec-fails",
      modern!,
      { device_username: USER, device_password: password },
      await execTemplate("linux-exec-fails", [COMMAND, `cat ${missing}`]),
    );
    const failed = await downloadOnce(t, failing);
    expect(failed.outcome, why(failed, modern)).toBe("error");
    expect(failed.message).toContain(`exited with status ${status}`);
    expect(failed.message).toContain(String(stderr).trim());
    expect(await latestConfigs(t, failing)).toEqual(new Map());

    // The command kills its own sshd session process once "partial" is out: the connection drops, no exit status.
    const cut = await createDevice(
      "sshd-exec-cut",
      modern!,
      { device_username: USER, device_password: password },
      await execTemplate("linux-exec-cut", ["echo partial; sleep 0.3; kill -KILL $PPID"]),
    );
    const dropped = await downloadOnce(t, cut);
    expect(dropped.outcome, why(dropped, modern)).toBe("error");
    expect(dropped.message).toMatch(/connection closed .*incomplete/);
    expect(dropped.result).toMatchObject({ last_lines: ["partial"] });
    expect(await latestConfigs(t, cut)).toEqual(new Map());
  });

  // Last in this group: it replaces the modern server's host key.
  it("refuses a different host key on the same port, naming both fingerprints", async () => {
    const id = await createDevice("sshd-rekeyed", modern!, { device_username: USER, device_password: password });
    expect((await downloadOnce(t, id)).outcome).toBe("success");
    const before = modern!.hostKeyFingerprint;

    await modern!.restart({ newHostKey: true });
    const after = modern!.hostKeyFingerprint;
    expect(after).not.toBe(before);

    const job = await downloadOnce(t, id);
    expect(job.outcome, why(job, modern)).toBe("host_key_changed");
    expect(job.message).toContain(before);
    expect(job.message).toContain(after);
    expect(await pinned(id)).toBe(before);
  });

  describe("an sshd that offers Diffie-Hellman group exchange before a fixed group", () => {
    let server: Sshd;
    beforeAll(async () => {
      // AES-256 makes a group-exchange client ask for an 8192-bit prime, whose safe-prime check in Node takes
      // most of a minute with the event loop blocked: the collector must settle on the fixed group instead.
      server = await startSshd({
        user: USER,
        config: {
          KexAlgorithms: "diffie-hellman-group-exchange-sha256,diffie-hellman-group14-sha256",
          Ciphers: "aes256-ctr",
          LogLevel: "DEBUG",
        },
      });
    });
    afterAll(async () => server?.stop());

    it("agrees on the fixed group", async () => {
      const id = await createDevice("sshd-gex-first", server, { device_username: USER, device_password: password });
      const job = await downloadOnce(t, id);
      expect(job.outcome, why(job, server)).toBe("success");
      expect(server.output()).toContain("kex: algorithm: diffie-hellman-group14-sha256");
    });
  });

  /** linux-generic copied through the API and given legacy_algorithms: true, as a user would. */
  let legacyTemplate: Promise<number> | undefined;
  const legacyCopy = () =>
    (legacyTemplate ??= (async () => {
      const copy = await t.call(`/api/v1/templates/${linuxGeneric}/copy`, {
        method: "POST",
        token: admin,
        body: { name: "linux-legacy" },
      });
      expect(copy.status, JSON.stringify(copy.body)).toBe(201);
      const code = `${copy.body.data.code.trimEnd()}\nlegacy_algorithms: true\n`;
      const patched = await t.call(`/api/v1/templates/${copy.body.data.id}`, {
        method: "PATCH",
        token: admin,
        body: { code },
      });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      return copy.body.data.id as number;
    })());

  describe.each(LEGACY_PROFILES)("an sshd that speaks only legacy algorithms: $name", (profile) => {
    let legacy: Sshd;
    const login = async (name: string) =>
      profile.login === "password"
        ? { device_username: USER, device_password: password }
        : { device_cred_id: await createKeyCredential(name, rsa) };

    beforeAll(async () => {
      legacy = await startSshd({
        user: USER,
        hostKeyType: profile.hostKeyType,
        authorizedKeys: [rsa.publicKey],
        config: {
          KexAlgorithms: profile.kex,
          Ciphers: profile.cipher,
          MACs: profile.mac,
          HostKeyAlgorithms: profile.hostKey,
          ...profile.extra,
          // sshd names the algorithms it agreed to only at debug level.
          LogLevel: "DEBUG",
        },
      });
    });
    afterAll(async () => legacy?.stop());

    it("is out of reach of a template without legacy_algorithms", async () => {
      const id = await createDevice(`sshd-legacy-off-${profile.kex}`, legacy, await login(`legacy-off-${profile.kex}`));

      const job = await downloadOnce(t, id);
      expect(job.outcome, why(job, legacy)).toBe("error");
      expect(job.message).toContain("legacy_algorithms");
      expect(await pinned(id)).toBeNull();
    });

    it("is reached by a user copy of linux-generic with legacy_algorithms: true", async () => {
      const id = await createDevice(
        `sshd-legacy-on-${profile.kex}`,
        legacy,
        await login(`legacy-on-${profile.kex}`),
        await legacyCopy(),
      );

      const job = await downloadOnce(t, id, { connectTimeoutMs: 30_000 });
      expect(job.outcome, why(job, legacy)).toBe("success");
      expect(Object.fromEntries(await latestConfigs(t, id))).toEqual({ [COMMAND]: expectedOutput() });
      expect(await pinned(id)).toBe(legacy.hostKeyFingerprint);
      const log = legacy.output();
      expect(log).toContain(`kex: algorithm: ${profile.kex}`);
      expect(log).toContain(`kex: host key algorithm: ${profile.hostKey}`);
      expect(log).toContain(`kex: client->server cipher: ${profile.cipher} MAC: ${profile.mac}`);
      expect(log).toContain(`kex: server->client cipher: ${profile.cipher} MAC: ${profile.mac}`);
      if (profile.login === "password") {
        expect(log).toContain(`Accepted password for ${USER} from 127.0.0.1 port `);
      } else {
        expect(log).toContain(`Accepted publickey for ${USER} from 127.0.0.1 port `);
        expect(log).toContain(`ssh2: RSA ${rsa.fingerprint}`);
      }
    });
  });
});

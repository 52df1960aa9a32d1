import { z } from "@hono/zod-openapi";
import { inArray, isNotNull, isNull, or, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { credentials, deviceProfiles, devices } from "../../db/schema/index.ts";
import { type DeviceUse, deviceCounts, refuseDeleteWhileDevicesUse } from "../../platform/http/device-usage.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { containsText } from "../../platform/http/list.ts";
import { checkUniqueName, defineResource, nameFilter, type WriteCtx } from "../../platform/http/resource.ts";
import { checkSshPrivateKey } from "../../platform/secrets/ssh-key.ts";
import { parseAuthProtocol, parsePrivProtocol, SNMP_AUTH_PROTOCOLS, SNMP_PRIV_PROTOCOLS } from "./snmp.ts";
import { plural } from "../../kernel/words.ts";
import { freeText, singleLine } from "../../platform/http/text.ts";

const Credential = z
  .object({
    id: z.number().int(),
    cred_name: z.string(),
    cred_description: z.string(),
    cred_username: z.string(),
    has_password: z.boolean(),
    has_enable_password: z.boolean(),
    has_ssh_key: z.boolean(),
    has_ssh_key_passphrase: z.boolean(),
    has_snmp_community: z.boolean(),
    snmp_v3_user: z.string().nullable(),
    snmp_v3_auth_protocol: z.enum(SNMP_AUTH_PROTOCOLS).nullable(),
    has_snmp_v3_auth_password: z.boolean(),
    snmp_v3_priv_protocol: z.enum(SNMP_PRIV_PROTOCOLS).nullable(),
    has_snmp_v3_priv_password: z.boolean(),
    cred_discovery: z.boolean().openapi({
      description:
        "Tried by credential discovery: scans, and devices set to discover their credentials (docs/discovery.md)",
    }),
    devices_count: z
      .number()
      .int()
      .openapi({ description: "Devices using the set as device_cred_id or device_snippet_cred_id" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("DeviceCredential");

const writeOnly = "Write-only (responses say has_...); null clears it; a PUT that leaves it out keeps it.";
const secret = (max: number, description: string, example: string) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .nullable()
    .optional()
    .openapi({ description: `${description}. ${writeOnly}`, example });

const CredentialInput = z
  .object({
    cred_name: singleLine(
      z.string().trim().min(1, "must not be empty").max(255, "must be at most 255 characters"),
    ).openapi({ description: "Unique name, compared case-insensitively", example: "core-routers" }),
    cred_description: freeText(z.string().max(1000, "must be at most 1000 characters"))
      .optional()
      .openapi({ example: "Backup account on the core" }),
    cred_username: singleLine(z.string().max(255, "must be at most 255 characters"))
      .optional()
      .openapi({ example: "backup" }),
    cred_password: secret(1024, "Login password", "s3cret-pass"),
    cred_enable_password: secret(1024, "Enable (privileged mode) password", "en4ble-pass"),
    ssh_key: secret(
      16_384,
      "SSH private key, OpenSSH or PEM format; checked with the collector's SSH library",
      "-----BEGIN OPENSSH PRIVATE KEY-----\n...",
    ),
    ssh_key_passphrase: secret(
      1024,
      "Passphrase of an encrypted ssh_key; sending ssh_key without it clears the stored one",
      "key passphrase",
    ),
    snmp_community: secret(255, "SNMP v1/v2c community", "n0t-public"),
    snmp_v3_user: singleLine(z.string().max(255, "must be at most 255 characters"))
      .nullable()
      .optional()
      .openapi({ description: "SNMPv3 user (security name)", example: "netkeep" }),
    cred_discovery: z
      .boolean({ error: "must be true or false" })
      .optional()
      .openapi({ description: "Try the set in credential discovery (default false)", example: true }),
    snmp_v3_auth_protocol: z
      .string()
      .max(32, "must be at most 32 characters")
      .nullable()
      .optional()
      .openapi({
        description: `SNMPv3 authentication: ${SNMP_AUTH_PROTOCOLS.join(", ")} (any case; SHA-256 style accepted)`,
        example: "sha256",
      }),
    snmp_v3_auth_password: secret(1024, "SNMPv3 authentication password, at least 8 characters", "auth-pass-123"),
    snmp_v3_priv_protocol: z
      .string()
      .max(32, "must be at most 32 characters")
      .nullable()
      .optional()
      .openapi({
        description: `SNMPv3 privacy: ${SNMP_PRIV_PROTOCOLS.join(", ")} (aes = AES-128; aes256r is the Reeder variant Cisco uses)`,
        example: "aes",
      }),
    snmp_v3_priv_password: secret(1024, "SNMPv3 privacy password, at least 8 characters", "priv-pass-123"),
  })
  .openapi("DeviceCredentialInput");

type Input = Partial<z.infer<typeof CredentialInput>>;
type CredentialRow = typeof credentials.$inferSelect;
type Values = Partial<typeof credentials.$inferInsert>;

/** Write-only input fields and the ciphertext column each is kept in. */
const SECRETS = {
  cred_password: "passwordEnc",
  cred_enable_password: "enablePasswordEnc",
  ssh_key: "sshKeyEnc",
  ssh_key_passphrase: "sshKeyPassphraseEnc",
  snmp_community: "snmpCommunityEnc",
  snmp_v3_auth_password: "snmpV3AuthPasswordEnc",
  snmp_v3_priv_password: "snmpV3PrivPasswordEnc",
} as const satisfies Record<string, keyof CredentialRow>;
type SecretField = keyof typeof SECRETS;

/** RFC 3414 turns SNMPv3 passwords into keys and requires at least 8 characters; agents refuse shorter ones. */
const SNMP_PASSWORD_MIN = 8;

export const usingCredentials = (ids: number[]): SQL =>
  or(inArray(devices.credId, ids), inArray(devices.snippetCredId, ids))!;

/** How devices use credentials (shared counting: platform/http/device-usage.ts). */
const CREDENTIAL_USE: DeviceUse = { columns: [devices.credId, devices.snippetCredId] };

const presence = (column: SQLiteColumn, describe: string) => ({
  describe: `true or false: whether ${describe} is stored`,
  build: (values: string[]): SQL => {
    if (values.some((v) => v !== "true" && v !== "false")) throw new ApiError(422, "values must be true or false");
    return or(...values.map((v) => (v === "true" ? isNotNull(column) : isNull(column))))!;
  },
});

/** Effective value of a column after this write: what the write sets, else what is stored. */
const effective =
  (values: Values, row: CredentialRow | null) =>
  <K extends keyof CredentialRow>(column: K) =>
    (column in values ? values[column as keyof Values] : (row?.[column] ?? null)) as CredentialRow[K] | null;

/**
 * The SSH key and its passphrase are checked together with the collector's SSH library. A passphrase belongs
 * to its key: sending ssh_key without ssh_key_passphrase clears the stored passphrase.
 */
async function resolveSshKey(input: Input, row: CredentialRow | null, ctx: WriteCtx, values: Values): Promise<void> {
  const keySent = input.ssh_key !== undefined;
  const passphraseSent = input.ssh_key_passphrase !== undefined;
  if (!keySent && !passphraseSent) return;
  const { secrets } = ctx.services;
  const stored = async (sealed: string | null | undefined) => (sealed ? secrets.decrypt(sealed) : null);
  const key = keySent ? input.ssh_key || null : await stored(row?.sshKeyEnc);
  const passphrase = passphraseSent
    ? input.ssh_key_passphrase || null
    : keySent
      ? null
      : await stored(row?.sshKeyPassphraseEnc);

  if (key === null) {
    if (passphrase !== null) ctx.bag.add("ssh_key_passphrase", "ssh_key_passphrase needs an ssh_key to decrypt");
  } else {
    const check = checkSshPrivateKey(key, passphrase ?? undefined);
    if (!check.ok) {
      switch (check.problem) {
        case "malformed":
          ctx.bag.add(
            "ssh_key",
            `ssh_key is not a private key the SSH client can read (${check.reason}); paste an OpenSSH or PEM private key`,
          );
          break;
        case "public-key":
          ctx.bag.add("ssh_key", "ssh_key is a public key; paste the private key");
          break;
        case "needs-passphrase":
          ctx.bag.add("ssh_key_passphrase", "ssh_key_passphrase is required: the ssh_key is encrypted");
          break;
        case "wrong-passphrase":
          ctx.bag.add("ssh_key_passphrase", "ssh_key_passphrase does not decrypt the ssh_key");
          break;
        case "not-encrypted":
          ctx.bag.add(
            "ssh_key_passphrase",
            "ssh_key_passphrase was given but the ssh_key is not encrypted; leave it out",
          );
          break;
      }
    }
  }
  if (keySent) values.sshKeyEnc = key === null ? null : await secrets.encrypt(key);
  values.sshKeyPassphraseEnc = passphrase === null ? null : await secrets.encrypt(passphrase);
}

/** SNMPv3 settings only work as a whole: auth needs a user, a protocol and a password; privacy needs auth. */
function checkSnmpV3(
  input: Input,
  values: Values,
  row: CredentialRow | null,
  ctx: WriteCtx,
  invalid: Set<string>,
): void {
  const get = effective(values, row);
  const isSet = {
    snmp_v3_user: get("snmpV3User") !== null,
    snmp_v3_auth_protocol: get("snmpV3AuthProtocol") !== null,
    snmp_v3_auth_password: get("snmpV3AuthPasswordEnc") !== null,
    snmp_v3_priv_protocol: get("snmpV3PrivProtocol") !== null,
    snmp_v3_priv_password: get("snmpV3PrivPasswordEnc") !== null,
  };
  type Field = keyof typeof isSet;
  const sent = (f: Field) => input[f] !== undefined;
  // The problem goes on the field this request touched, worded for what the client can do about it.
  const needs = (a: Field, b: Field, why = "") => {
    if (!isSet[a] || isSet[b] || invalid.has(a) || invalid.has(b)) return;
    if (sent(a)) ctx.bag.add(a, `${a} needs ${b}${why}`);
    else ctx.bag.add(b, `${b} is required while ${a} is set (send ${a}: null to clear it)`);
  };
  needs("snmp_v3_auth_password", "snmp_v3_auth_protocol", `: one of ${SNMP_AUTH_PROTOCOLS.join(", ")}`);
  needs("snmp_v3_auth_protocol", "snmp_v3_auth_password");
  needs("snmp_v3_priv_password", "snmp_v3_priv_protocol", `: one of ${SNMP_PRIV_PROTOCOLS.join(", ")}`);
  needs("snmp_v3_priv_protocol", "snmp_v3_priv_password");
  needs(
    isSet.snmp_v3_priv_protocol ? "snmp_v3_priv_protocol" : "snmp_v3_priv_password",
    "snmp_v3_auth_protocol",
    " (SNMPv3 has no privacy without authentication)",
  );
  needs("snmp_v3_auth_protocol", "snmp_v3_user");
}

async function toValues(input: Input, row: CredentialRow | null, ctx: WriteCtx): Promise<Values> {
  const { bag } = ctx;
  const nameKey = await checkUniqueName(
    ctx,
    credentials.nameKey,
    credentials.id,
    input.cred_name,
    row?.id ?? null,
    "cred_name",
  );
  const values: Values =
    ctx.mode === "patch"
      ? {}
      : { description: "", username: "", snmpV3User: null, snmpV3AuthProtocol: null, snmpV3PrivProtocol: null };
  if (input.cred_name !== undefined) Object.assign(values, { name: input.cred_name, nameKey });
  if (input.cred_description !== undefined) values.description = input.cred_description;
  if (input.cred_username !== undefined) values.username = input.cred_username;
  if (input.snmp_v3_user !== undefined) values.snmpV3User = input.snmp_v3_user?.trim() || null;
  if (input.cred_discovery !== undefined) values.discovery = input.cred_discovery;

  const invalid = new Set<string>();
  const protocol = <T>(
    field: "snmp_v3_auth_protocol" | "snmp_v3_priv_protocol",
    parse: (t: string) => { value: T } | { problem: string },
  ) => {
    const text = input[field];
    if (text === undefined) return undefined;
    if (text === null || text.trim() === "") return null;
    const parsed = parse(text);
    if ("value" in parsed) return parsed.value;
    invalid.add(field);
    bag.add(field, `${field} ${parsed.problem}`);
    return undefined;
  };
  const auth = protocol("snmp_v3_auth_protocol", parseAuthProtocol);
  if (auth !== undefined) values.snmpV3AuthProtocol = auth;
  const priv = protocol("snmp_v3_priv_protocol", parsePrivProtocol);
  if (priv !== undefined) values.snmpV3PrivProtocol = priv;

  for (const field of ["snmp_v3_auth_password", "snmp_v3_priv_password"] as const) {
    const text = input[field];
    if (text && text.length < SNMP_PASSWORD_MIN) {
      invalid.add(field);
      bag.add(field, `${field} must be at least ${SNMP_PASSWORD_MIN} characters (SNMPv3 requires it)`);
    }
  }
  // Empty and null both clear, as for device passwords.
  for (const [field, column] of Object.entries(SECRETS) as [SecretField, (typeof SECRETS)[SecretField]][]) {
    if (field === "ssh_key" || field === "ssh_key_passphrase") continue;
    const text = input[field];
    if (text !== undefined) values[column] = text ? await ctx.services.secrets.encrypt(text) : null;
  }
  await resolveSshKey(input, row, ctx, values);
  checkSnmpV3(input, values, row, ctx, invalid);
  return values;
}

export const credentialsResource = defineResource({
  tag: "Device credentials",
  path: "/device-credentials",
  singular: "credential set",
  plural: "credential sets",
  resource: "credentials",
  table: credentials,
  output: Credential,
  input: CredentialInput,
  listSpec: {
    fields: Object.keys(Credential.shape),
    filters: {
      id: {
        describe: "Credential set id",
        build: (v) => {
          if (v.some((s) => !/^\d+$/.test(s))) throw new ApiError(422, "values must be whole numbers");
          return inArray(credentials.id, v.map(Number));
        },
      },
      cred_name: nameFilter(credentials.nameKey),
      cred_username: { describe: "Exact username", build: (v) => inArray(credentials.username, v) },
      snmp_v3_user: { describe: "Exact SNMPv3 user", build: (v) => inArray(credentials.snmpV3User, v) },
      has_password: presence(credentials.passwordEnc, "a password"),
      has_ssh_key: presence(credentials.sshKeyEnc, "an SSH key"),
      has_snmp_community: presence(credentials.snmpCommunityEnc, "an SNMP community"),
    },
    sorts: {
      id: credentials.id,
      cred_name: sql`lower(${credentials.name})`,
      cred_username: sql`lower(${credentials.username})`,
      created_at: credentials.createdAt,
      updated_at: credentials.updatedAt,
    },
    defaultSort: "cred_name",
    idColumn: credentials.id,
    search: {
      describe: "Substring of the name, description or username",
      build: (term) =>
        or(
          containsText(credentials.name, term),
          containsText(credentials.description, term),
          containsText(credentials.username, term),
        )!,
    },
  },
  reaches: async (_db, ids) => usingCredentials(ids),
  async serialize(db, rows, scope) {
    const counts = await deviceCounts(
      db,
      CREDENTIAL_USE,
      rows.map((r) => r.id),
      scope,
    );
    return (rows as CredentialRow[]).map((r) => ({
      id: r.id,
      cred_name: r.name,
      cred_description: r.description,
      cred_username: r.username,
      has_password: r.passwordEnc !== null,
      has_enable_password: r.enablePasswordEnc !== null,
      has_ssh_key: r.sshKeyEnc !== null,
      has_ssh_key_passphrase: r.sshKeyPassphraseEnc !== null,
      has_snmp_community: r.snmpCommunityEnc !== null,
      snmp_v3_user: r.snmpV3User,
      snmp_v3_auth_protocol: r.snmpV3AuthProtocol,
      has_snmp_v3_auth_password: r.snmpV3AuthPasswordEnc !== null,
      snmp_v3_priv_protocol: r.snmpV3PrivProtocol,
      has_snmp_v3_priv_password: r.snmpV3PrivPasswordEnc !== null,
      cred_discovery: r.discovery,
      devices_count: counts.get(r.id) ?? 0,
      created_at: r.createdAt.toISOString(),
      updated_at: r.updatedAt.toISOString(),
    }));
  },
  toValues: (input, existing, ctx) => toValues(input, existing as CredentialRow | null, ctx),
  async beforeDelete(rows, ctx) {
    const ids = rows.map((r) => r.id);
    await refuseDeleteWhileDevicesUse(
      ctx.tx,
      CREDENTIAL_USE,
      ids,
      "Credential set",
      (n) => `give ${n === 1 ? "it" : "them"} other credentials first`,
    );
    // The foreign keys say ON DELETE SET NULL too; clearing here counts the profiles so the answer can say so.
    const cleared = new Set<number>();
    for (const column of ["credId", "snippetCredId"] as const) {
      const changed = await ctx.tx
        .update(deviceProfiles)
        .set({ [column]: null })
        .where(inArray(deviceProfiles[column], ids))
        .returning({ id: deviceProfiles.id });
      for (const p of changed) cleared.add(p.id);
    }
    return cleared.size ? `cleared from ${plural(cleared.size, "device profile")}` : undefined;
  },
  descriptions: {
    create:
      "Secrets (passwords, SSH key and passphrase, SNMP community and v3 passwords) are encrypted with the app key and never returned: responses say has_...: true. An SSH key is checked with the collector's SSH library; an SNMPv3 auth password needs its protocol and user, privacy needs authentication.",
    update:
      "PUT resets left-out plain fields to their defaults but keeps secrets that are not sent (they cannot be read back); null clears one. Sending ssh_key without ssh_key_passphrase clears the stored passphrase.",
    delete:
      "Refused with 409 while any device uses the set (as device_cred_id or device_snippet_cred_id). Device profiles that name it lose it as their default; the answer says how many.",
  },
});

import { z } from "@hono/zod-openapi";
import { freeText, singleLine } from "../http/text.ts";

/** What an additional directory (ldap.directories) holds when a field is not given: the main directory's defaults. */
export const DIRECTORY_DEFAULTS = {
  enabled: true,
  url: null as string | null,
  allow_insecure: false,
  ca_certificate: null as string | null,
  bind_dn: null as string | null,
  user_base: null as string | null,
  user_filter: "(uid={username})",
  email_attribute: "mail",
  group_base: null as string | null,
  group_filter: "(member={dn})",
  group_roles: {} as Record<string, string>,
  timeout_seconds: 10,
};
/** The name the main directory (the ldap section's own fields) goes by in logs and `svc ldap:* --directory`. */
export const MAIN_DIRECTORY = "main";
/** An additional directory as stored and shown: its bind password is kept apart, sealed (app_settings). */
export type StoredDirectory = typeof DIRECTORY_DEFAULTS & { name: string; has_bind_password: boolean };

/**
 * The settings document: what GET shows (with defaults filled in) and what PATCH merges into, section by
 * section. Every default is here; the stored row holds only what someone changed, so a new default reaches
 * installations that never set the field.
 */
export const SETTINGS_DEFAULTS = {
  timezone: "UTC",
  login_banner: "",
  compare: { ignore_whitespace: false, context_lines: 3 },
  default_credential_id: null as number | null,
  collector: { connect_timeout_seconds: 30, command_timeout_seconds: 60, retries: 1, discovery_tries_per_hour: 6 },
  smtp: {
    host: null as string | null,
    port: 587,
    encryption: "starttls" as "none" | "starttls" | "tls",
    username: null as string | null,
    from_address: null as string | null,
  },
  webhooks: { timeout_seconds: 10, retries: 7, allow_private_ranges: true, private_response_excerpts: false },
  backups: { cron: "0 1 * * *", keep: 7 },
  syslog: { enabled: false, port: 5514, bind_address: "0.0.0.0", debounce_seconds: 30, relays: [] as string[] },
  ldap: {
    enabled: false,
    url: null as string | null,
    allow_insecure: false,
    ca_certificate: null as string | null,
    bind_dn: null as string | null,
    user_base: null as string | null,
    user_filter: "(uid={username})",
    email_attribute: "mail",
    group_base: null as string | null,
    group_filter: "(member={dn})",
    group_roles: {} as Record<string, string>,
    group_refresh_minutes: 15,
    timeout_seconds: 10,
    directories: [] as StoredDirectory[],
  },
  oidc: {
    enabled: false,
    issuer: null as string | null,
    client_id: null as string | null,
    scopes: "openid profile email",
    group_claim: "groups",
    group_roles: {} as Record<string, string>,
    button_label: "single sign-on",
    group_refresh_minutes: 15,
  },
  mfa: { required_for: "none" as "none" | "admins" | "all" },
  tokens: { default_expiry_days: null as number | null, expiry_warning_days: 7 },
};

export type Settings = typeof SETTINGS_DEFAULTS;
export type SettingsOut = Omit<Settings, "smtp" | "ldap" | "oidc"> & {
  oidc: Settings["oidc"] & { has_client_secret: boolean };
  smtp: Settings["smtp"] & { has_password: boolean };
  ldap: Settings["ldap"] & { has_bind_password: boolean };
};

const whole = (min: number, max: number, unit: string) =>
  z
    .number({ error: `must be a whole number of ${unit}` })
    .int(`must be a whole number of ${unit}`)
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

const Compare = z.object({
  ignore_whitespace: z.boolean().openapi({ description: "Diffs ignore changes in spacing alone" }),
  context_lines: z.number().int().openapi({ description: "Unchanged lines shown around each change in a diff" }),
});
const Collector = z.object({
  connect_timeout_seconds: z.number().int().openapi({
    description:
      "How long a collector waits for a device's connection and SSH handshake; collectors apply a change within 10 s",
  }),
  command_timeout_seconds: z.number().int().openapi({
    description:
      "The longest silence a session allows while waiting for the device's prompt (each command's output); collectors apply a change within 10 s",
  }),
  retries: z.number().int().openapi({
    description:
      "Further attempts of a device job whose connection failed (timeout, unreachable); fixed when a job is queued (its max_attempts)",
  }),
  discovery_tries_per_hour: z.number().int().openapi({
    description:
      "The most failed logins credential discovery tries against one address in an hour (docs/discovery.md), so no account locks out",
  }),
});
const Webhooks = z.object({
  timeout_seconds: z.number().int().openapi({ description: "How long a webhook delivery waits for the receiver" }),
  retries: z.number().int().openapi({
    description:
      "Further attempts after a delivery failed with a timeout, a connection error or a 5xx, with growing pauses (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: the default 7 spans about a day)",
  }),
  allow_private_ranges: z.boolean().openapi({
    description:
      "Whether webhooks may go to private, loopback and carrier-grade NAT addresses (link-local and cloud metadata addresses never)",
  }),
  private_response_excerpts: z.boolean().openapi({
    description:
      "Whether the delivery log keeps the first 1 KB of the answer of a receiver at a private, loopback or carrier-grade NAT address, as it does for public ones (off: the log would show internal services' answers to whoever may manage webhooks)",
  }),
});
const Backups = z.object({
  cron: z.string().openapi({
    description:
      "When the database backup system task runs (five-field cron, in the task's time zone): the task's own schedule, the same as editing the task",
  }),
  keep: z
    .number()
    .int()
    .openapi({ description: "How many database backups to keep; older ones are deleted after each new one" }),
});

const Syslog = z.object({
  enabled: z.boolean().openapi({
    description:
      "Whether collectors receive syslog messages and back a device up when one says its configuration changed (docs/syslog.md)",
  }),
  port: z.number().int().openapi({
    description: "The UDP and TCP port the receiver listens on (514 needs privileges: forward it, see docs/syslog.md)",
  }),
  bind_address: z.string().openapi({
    description: "The local address the receiver listens on (0.0.0.0: every IPv4 address, :: every address)",
  }),
  debounce_seconds: z.number().int().openapi({
    description:
      'Quiet time after a device\'s last "configuration changed" message before its backup starts: ten commits in a minute make one backup',
  }),
  relays: z.array(z.string()).openapi({
    description:
      "Addresses of trusted syslog relays (rsyslog, syslog-ng): a message from one is matched to a device by its HOSTNAME field (the device's name or address), never a message from any other sender (docs/syslog.md)",
  }),
});

/** A directory's fields, shown the same for the main directory (the ldap section) and each of ldap.directories. */
const directoryOutFields = {
  url: z
    .string()
    .nullable()
    .openapi({ description: "ldaps://host:636 (TLS), or ldap://host:389 (StartTLS, or plain with allow_insecure)" }),
  allow_insecure: z.boolean().openapi({
    description:
      "With an ldap:// url: no StartTLS, passwords cross the network in clear (logged as a warning at each connection)",
  }),
  ca_certificate: z.string().nullable().openapi({
    description: "PEM certificate(s) the directory's TLS certificate must chain to (null: the system's trusted CAs)",
  }),
  bind_dn: z
    .string()
    .nullable()
    .openapi({ description: "The service account that searches for users and groups (null: anonymous search)" }),
  has_bind_password: z
    .boolean()
    .openapi({ description: "The bind password is write-only: this says whether one is stored" }),
  user_base: z.string().nullable().openapi({ description: "Where users are searched (subtree)" }),
  user_filter: z
    .string()
    .openapi({ description: "Finds one user; {username} is replaced by the typed name, escaped per RFC 4515" }),
  email_attribute: z.string().openapi({ description: "The user entry's attribute that holds the e-mail address" }),
  group_base: z.string().nullable().openapi({ description: "Where groups are searched (subtree; null: user_base)" }),
  group_filter: z
    .string()
    .openapi({ description: "Finds the user's groups; {dn} is the user's DN and {username} the name, both escaped" }),
  group_roles: z.record(z.string(), z.string()).openapi({
    description: "A group's cn -> a netkeep role name; the first entry whose group the user is in gives the role",
  }),
  timeout_seconds: z
    .number()
    .int()
    .openapi({ description: "How long a connection or an operation on the directory may take" }),
};

const Directory = z.object({
  name: z.string().openapi({ description: "What the directory is called in the activity log, events and svc ldap:*" }),
  enabled: z.boolean().openapi({ description: "Whether sign-in tries this directory" }),
  ...directoryOutFields,
});

const Ldap = z.object({
  enabled: z.boolean().openapi({
    description:
      "Users not found among local users sign in against the directory (the main one: this section's fields)",
  }),
  ...directoryOutFields,
  group_refresh_minutes: z.number().int().openapi({
    description:
      "How long a directory user's groups are trusted before they are read again (at the next request); for every directory",
  }),
  directories: z.array(Directory).openapi({
    description:
      "Further directories, tried in order after the main one: the first whose user_filter finds the name decides (docs/users.md)",
  }),
});

const Oidc = z.object({
  enabled: z.boolean().openapi({
    description: "The login page offers single sign-on through the OpenID Connect provider (docs/users.md)",
  }),
  issuer: z.string().nullable().openapi({
    description: "The provider's issuer URL; its discovery document is at <issuer>/.well-known/openid-configuration",
  }),
  client_id: z.string().nullable().openapi({ description: "The client (application) id registered at the provider" }),
  has_client_secret: z
    .boolean()
    .openapi({ description: "The client secret is write-only: this says whether one is stored" }),
  scopes: z.string().openapi({ description: "Scopes asked for, space-separated (openid is always among them)" }),
  group_claim: z.string().openapi({ description: "The ID token claim that lists the user's groups" }),
  group_roles: z.record(z.string(), z.string()).openapi({
    description:
      "A group claim value -> a netkeep role name; the first entry whose group the user is in gives the role",
  }),
  button_label: z.string().openapi({ description: 'The login page\'s button reads "Sign in with <button_label>"' }),
  group_refresh_minutes: z.number().int().openapi({
    description:
      "How long a single sign-on user's groups are trusted before they are read again at the provider with their refresh token (at the next request)",
  }),
});

const Mfa = z.object({
  required_for: z.enum(["none", "admins", "all"]).openapi({
    description:
      "Local users who must use a second factor (TOTP): none, holders of the built-in admin role, or all; one without it enrols at their next sign-in",
  }),
});

const Tokens = z.object({
  default_expiry_days: z.number().int().nullable().openapi({
    description: "Days until a new API token expires when its creator gives no date (null: such tokens never expire)",
  }),
  expiry_warning_days: z.number().int().openapi({
    description: "How many days before a token expires the token.expiring event goes out (once per token)",
  }),
});

export const SettingsSchema = z
  .object({
    timezone: z.string().openapi({
      description: "IANA time zone for display and as the default of new tasks' schedules",
      example: "Europe/Berlin",
    }),
    login_banner: z.string().openapi({ description: "Shown on the login page (plain text)" }),
    compare: Compare,
    default_credential_id: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Credential new devices get when none is given (null: none)" }),
    collector: Collector,
    smtp: z.object({
      host: z.string().nullable(),
      port: z.number().int(),
      encryption: z.enum(["none", "starttls", "tls"]),
      username: z.string().nullable(),
      from_address: z.string().nullable(),
      has_password: z.boolean().openapi({ description: "The password is write-only: this says whether one is stored" }),
    }),
    webhooks: Webhooks,
    backups: Backups,
    syslog: Syslog,
    ldap: Ldap,
    oidc: Oidc,
    mfa: Mfa,
    tokens: Tokens,
    updated_at: z.string().nullable(),
  })
  .openapi("Settings");

const hostName = singleLine(z.string().trim().min(1, "must not be empty").max(253, "must be at most 253 characters"));

/** A directory's fields as a PATCH sends them: the ldap section's own (the main directory) and each of ldap.directories. */
const directoryPatchFields = {
  // refine, not regex: a case-insensitive pattern has no faithful JSON Schema form (its flag was printed into it)
  url: z
    .string()
    .refine((u) => /^ldaps?:\/\/[^\s/?#]+\/?$/i.test(u), "must be ldaps://host[:port] or ldap://host[:port]")
    .nullable()
    .optional()
    .openapi({ example: "ldaps://dc1.example.net:636" }),
  allow_insecure: z.boolean({ error: "must be true or false" }).optional(),
  ca_certificate: z
    .string()
    .max(65536, "must be at most 64 KiB")
    .refine((pem) => pem.includes("-----BEGIN CERTIFICATE-----"), "must be PEM text (-----BEGIN CERTIFICATE-----)")
    .nullable()
    .optional()
    .openapi({ example: "-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n" }),
  bind_dn: singleLine(
    z
      .string()
      .min(1, "must not be empty (send null for an anonymous search)")
      .max(1024, "must be at most 1024 characters"),
  )
    .nullable()
    .optional()
    .openapi({ example: "CN=netkeep,OU=Service Accounts,DC=example,DC=net" }),
  bind_password: z
    .string()
    .min(1, "must not be empty (send null to remove it)")
    .max(1024, "must be at most 1024 characters")
    .nullable()
    .optional()
    .openapi({ description: "Write-only; null removes it", example: "s3cret-bind" }),
  user_base: singleLine(z.string().min(1, "must not be empty").max(1024, "must be at most 1024 characters"))
    .nullable()
    .optional()
    .openapi({ example: "OU=Staff,DC=example,DC=net" }),
  user_filter: singleLine(z.string().max(1024, "must be at most 1024 characters"))
    .refine((f) => f.includes("{username}"), "must contain {username}")
    .optional()
    .openapi({ example: "(&(sAMAccountName={username})(!(userAccountControl:1.2.840.113556.1.4.803:=2)))" }),
  email_attribute: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/, "must be an attribute name")
    .optional(),
  group_base: singleLine(z.string().min(1, "must not be empty").max(1024, "must be at most 1024 characters"))
    .nullable()
    .optional(),
  group_filter: singleLine(z.string().max(1024, "must be at most 1024 characters"))
    .refine((f) => f.includes("{dn}") || f.includes("{username}"), "must contain {dn} or {username}")
    .optional()
    .openapi({ example: "(&(objectClass=group)(member={dn}))" }),
  group_roles: z
    .record(z.string().min(1).max(255), z.string().min(1).max(255))
    .optional()
    .openapi({ example: { "netkeep-admins": "admin", "network-engineers": "operator", helpdesk: "viewer" } }),
  timeout_seconds: whole(1, 120, "seconds").optional(),
};

const DirectoryPatch = z.strictObject({
  name: z
    .string({ error: "must be a name" })
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "must be 1-64 lower-case letters, digits, '-' or '_'")
    .refine((n) => n !== MAIN_DIRECTORY, `'${MAIN_DIRECTORY}' is the ldap section's own directory`)
    .openapi({ example: "emea" }),
  enabled: z.boolean({ error: "must be true or false" }).optional(),
  ...directoryPatchFields,
});

/** PATCH: any subset of fields, sections merged field by field; unknown fields are refused. */
export const SettingsPatch = z
  .strictObject({
    timezone: z.string().max(64, "must be at most 64 characters").optional().openapi({ example: "Europe/Berlin" }),
    login_banner: freeText(z.string().max(2000, "must be at most 2000 characters"))
      .optional()
      .openapi({ example: "Authorised use only." }),
    compare: z
      .strictObject({
        ignore_whitespace: z.boolean({ error: "must be true or false" }).optional(),
        context_lines: whole(0, 100, "lines").optional(),
      })
      .optional(),
    default_credential_id: z
      .number({ error: "must be a credential id or null" })
      .int("must be a credential id or null")
      .min(1, "must be a credential id or null")
      .nullable()
      .optional(),
    collector: z
      .strictObject({
        connect_timeout_seconds: whole(1, 600, "seconds").optional(),
        command_timeout_seconds: whole(1, 3600, "seconds").optional(),
        retries: whole(0, 10, "retries").optional(),
        discovery_tries_per_hour: whole(1, 100, "tries").optional(),
      })
      .optional(),
    smtp: z
      .strictObject({
        host: hostName.nullable().optional().openapi({ example: "smtp.example.net" }),
        port: whole(1, 65535, "a port").optional().openapi({ example: 587 }),
        encryption: z.enum(["none", "starttls", "tls"], { error: "must be one of: none, starttls, tls" }).optional(),
        username: singleLine(z.string().max(255, "must be at most 255 characters")).nullable().optional(),
        password: z
          .string()
          .min(1, "must not be empty (send null to remove it)")
          .max(1024, "must be at most 1024 characters")
          .nullable()
          .optional()
          .openapi({ description: "Write-only; null removes it", example: "s3cret-mail" }),
        from_address: z
          .email("must be an e-mail address")
          .nullable()
          .optional()
          .openapi({ example: "netkeep@example.net" }),
      })
      .optional(),
    webhooks: z
      .strictObject({
        timeout_seconds: whole(1, 120, "seconds").optional(),
        retries: whole(0, 20, "retries").optional(),
        allow_private_ranges: z.boolean({ error: "must be true or false" }).optional(),
        private_response_excerpts: z.boolean({ error: "must be true or false" }).optional(),
      })
      .optional(),
    backups: z
      .strictObject({
        cron: z.string().max(100, "must be at most 100 characters").optional().openapi({ example: "0 1 * * *" }),
        keep: whole(1, 1000, "backups").optional().openapi({ example: 7 }),
      })
      .optional(),
    syslog: z
      .strictObject({
        enabled: z.boolean({ error: "must be true or false" }).optional(),
        port: whole(1, 65535, "a port").optional().openapi({ example: 5514 }),
        bind_address: z
          .union([z.ipv4(), z.ipv6()], { error: "must be an IPv4 or IPv6 address, e.g. 0.0.0.0" })
          .optional()
          .openapi({ example: "0.0.0.0" }),
        debounce_seconds: whole(0, 3600, "seconds").optional().openapi({ example: 30 }),
        relays: z
          .array(z.union([z.ipv4(), z.ipv6()], { error: "must be an IPv4 or IPv6 address, e.g. 192.0.2.10" }), {
            error: "must be a list of addresses",
          })
          .max(100, "must list at most 100 relays")
          .optional()
          .openapi({ example: ["192.0.2.10"] }),
      })
      .optional(),
    ldap: z
      .strictObject({
        enabled: z.boolean({ error: "must be true or false" }).optional(),
        ...directoryPatchFields,
        group_refresh_minutes: whole(1, 1440, "minutes").optional(),
        directories: z
          .array(DirectoryPatch, { error: "must be a list of directories" })
          .max(20, "must list at most 20 directories")
          .superRefine((list, ctx) => {
            const seen = new Set<string>();
            list.forEach((d, i) => {
              const key = d.name.toLowerCase();
              if (seen.has(key))
                ctx.addIssue({ code: "custom", path: [i, "name"], message: `'${d.name}' is named twice` });
              seen.add(key);
            });
          })
          .optional()
          .openapi({
            description:
              "Replaces the list whole. An entry keeps the stored bind password of the entry of the same name unless it sends bind_password (null removes it)",
          }),
      })
      .optional(),
    oidc: z
      .strictObject({
        enabled: z.boolean({ error: "must be true or false" }).optional(),
        issuer: z
          .url({ protocol: /^https?$/, error: "must be an http(s) URL, the provider's issuer" })
          .max(1024, "must be at most 1024 characters")
          .nullable()
          .optional()
          .openapi({ example: "https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000/v2.0" }),
        client_id: singleLine(z.string().min(1, "must not be empty").max(255, "must be at most 255 characters"))
          .nullable()
          .optional()
          .openapi({ example: "netkeep" }),
        client_secret: z
          .string()
          .min(1, "must not be empty (send null to remove it)")
          .max(1024, "must be at most 1024 characters")
          .nullable()
          .optional()
          .openapi({ description: "Write-only; null removes it (a public client then)", example: "s3cret-oidc" }),
        scopes: singleLine(z.string().max(1024, "must be at most 1024 characters"))
          .refine((s) => s.split(/\s+/).includes("openid"), "must include openid")
          .optional()
          .openapi({ example: "openid profile email groups" }),
        group_claim: z
          .string()
          .regex(/^[A-Za-z0-9_:.\/-]{1,255}$/, "must be a claim name, e.g. groups")
          .optional()
          .openapi({ example: "groups" }),
        group_roles: z
          .record(z.string().min(1).max(255), z.string().min(1).max(255))
          .optional()
          .openapi({ example: { "netkeep-admins": "admin", "network-engineers": "operator" } }),
        button_label: singleLine(z.string().min(1, "must not be empty").max(64, "must be at most 64 characters"))
          .optional()
          .openapi({ example: "Entra ID" }),
        group_refresh_minutes: whole(1, 1440, "minutes").optional(),
      })
      .optional(),
    mfa: z
      .strictObject({
        required_for: z
          .enum(["none", "admins", "all"], { error: "must be one of: none, admins, all" })
          .optional()
          .openapi({ example: "admins" }),
      })
      .optional(),
    tokens: z
      .strictObject({
        default_expiry_days: whole(1, 3650, "days").nullable().optional().openapi({ example: 90 }),
        expiry_warning_days: whole(1, 365, "days").optional().openapi({ example: 7 }),
      })
      .optional(),
  })
  .openapi("SettingsPatch");
export type SettingsPatch = z.infer<typeof SettingsPatch>;

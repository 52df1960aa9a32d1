import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamp, timestamps } from "./columns.ts";
import { nameKeyColumn } from "../name-key.ts";

export const roles = sqliteTable(
  "roles",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    description: text("description").notNull().default(""),
    builtin: integer("builtin", { mode: "boolean" }).notNull().default(false),
    /** Abilities from the catalogue, e.g. ["devices.read", "configs.read"]. */
    permissions: text("permissions", { mode: "json" }).$type<string[]>().notNull(),
    /** Device scope: every device, or only devices carrying any of these tags or in any of these categories. */
    scopeAll: integer("scope_all", { mode: "boolean" }).notNull().default(true),
    scopeTagIds: text("scope_tag_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    scopeCategoryIds: text("scope_category_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    ...timestamps,
  },
  (t) => [uniqueIndex("roles_name_key_unique").on(t.nameKey)],
);

export const users = sqliteTable(
  "users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    username: text("username").notNull(),
    usernameKey: nameKeyColumn("username_key"),
    email: text("email").notNull(),
    emailKey: nameKeyColumn("email_key"),
    passwordHash: text("password_hash").notNull(),
    roleId: integer("role_id")
      .notNull()
      .references(() => roles.id),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    lastLoginAt: timestamp("last_login_at"),
    /**
     * Where the user proves who they are: "local" (the password hash here) or "ldap" (a bind to the directory;
     * password_hash then holds no usable hash and the role follows the user's directory groups).
     */
    authSource: text("auth_source", { enum: ["local", "ldap", "oidc"] })
      .notNull()
      .default("local"),
    /** When a directory user's groups were last read: re-read after the settings' group refresh interval. */
    directoryCheckedAt: timestamp("directory_checked_at"),
    /**
     * A single sign-on user's refresh token from their last sign-in, sealed under the app key: how their groups
     * are read again after the refresh interval without them. Null: none (they sign in again).
     */
    oidcRefreshTokenEnc: text("oidc_refresh_token_enc"),
    /** The confirmed TOTP secret (base32), sealed under the app key; null: no second factor. */
    totpSecretEnc: text("totp_secret_enc"),
    /** A secret shown for enrolment and not yet confirmed with a code. */
    totpPendingEnc: text("totp_pending_enc"),
    /** The last 30-second step whose code was accepted: a code of that step or an earlier one is a replay. */
    totpLastStep: integer("totp_last_step"),
    /** SHA-256 of each unused recovery code; one is removed when used. */
    recoveryCodeHashes: text("recovery_code_hashes", { mode: "json" }).$type<string[]>().notNull().default([]),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("users_username_key_unique").on(t.usernameKey),
    uniqueIndex("users_email_key_unique").on(t.emailKey),
  ],
);

export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** SHA-256 of the token value; the value itself is shown once and never stored. */
    tokenHash: text("token_hash").notNull(),
    /** The first characters of the value, so a user can tell their tokens apart. */
    tokenPrefix: text("token_prefix").notNull(),
    abilities: text("abilities", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: timestamp("created_at").notNull(),
    lastUsedAt: timestamp("last_used_at"),
    expiresAt: timestamp("expires_at"),
    revokedAt: timestamp("revoked_at"),
    /** When the `token.expiring` warning went out (once per token). */
    expiryWarnedAt: timestamp("expiry_warned_at"),
  },
  (t) => [uniqueIndex("api_tokens_hash_unique").on(t.tokenHash), index("api_tokens_user_idx").on(t.userId)],
);

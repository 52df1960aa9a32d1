import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { timestamp } from "./columns.ts";

/**
 * The service's settings: one row (id 1), absent until the first change, so every default lives in code
 * (src/platform/settings/schema.ts). `values` holds the JSON document the API shows, validated on every write;
 * the SMTP password is kept apart, sealed under the app key like device credentials (its `_enc` name puts it
 * in the key rotation), and never shown.
 */
export const appSettings = sqliteTable("app_settings", {
  id: integer("id").primaryKey(),
  values: text("values", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  smtpPasswordEnc: text("smtp_password_enc"),
  /** The directory service account's password (settings' ldap.bind_password), sealed like the SMTP password. */
  ldapBindPasswordEnc: text("ldap_bind_password_enc"),
  /** The OpenID Connect client secret (settings' oidc.client_secret), sealed like the SMTP password. */
  oidcClientSecretEnc: text("oidc_client_secret_enc"),
  /** The bind passwords of ldap.directories, one JSON object (entry name -> password) sealed like the others. */
  ldapDirectoryPasswordsEnc: text("ldap_directory_passwords_enc"),
  updatedAt: timestamp("updated_at").notNull(),
});

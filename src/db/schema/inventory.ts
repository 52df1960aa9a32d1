import { sql } from "drizzle-orm";
import { integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamps } from "./columns.ts";
import { nameKeyColumn } from "../name-key.ts";

export const vendors = sqliteTable(
  "vendors",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    ...timestamps,
  },
  (t) => [uniqueIndex("vendors_name_key_unique").on(t.nameKey)],
);

export const tags = sqliteTable(
  "tags",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    color: text("color").notNull().default("#6b7280"),
    description: text("description").notNull().default(""),
    ...timestamps,
  },
  (t) => [uniqueIndex("tags_name_key_unique").on(t.nameKey)],
);

/** Command groups: a device's category decides which commands a backup runs. */
export const categories = sqliteTable(
  "categories",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    description: text("description").notNull().default(""),
    ...timestamps,
  },
  (t) => [uniqueIndex("categories_name_key_unique").on(t.nameKey)],
);

export const commands = sqliteTable("commands", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  command: text("command").notNull(),
  description: text("description").notNull().default(""),
  ...timestamps,
});

export const commandCategories = sqliteTable(
  "command_categories",
  {
    commandId: integer("command_id")
      .notNull()
      .references(() => commands.id, { onDelete: "cascade" }),
    categoryId: integer("category_id")
      .notNull()
      .references(() => categories.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.commandId, t.categoryId] })],
);

/** Connection templates: YAML describing how to talk to a vendor family. Built-ins are seeded and read-only. */
export const templates = sqliteTable(
  "templates",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    description: text("description").notNull().default(""),
    code: text("code").notNull(),
    /** The file name under collector/templates/ for a built-in, null for a user's template. */
    builtinKey: text("builtin_key"),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("templates_name_key_unique").on(t.nameKey),
    uniqueIndex("templates_builtin_key_unique").on(t.builtinKey),
  ],
);

/** Every *Enc column holds AES-256-GCM ciphertext under the app key; nothing secret is stored in clear. */
export const credentials = sqliteTable(
  "credentials",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    description: text("description").notNull().default(""),
    username: text("username").notNull().default(""),
    passwordEnc: text("password_enc"),
    enablePasswordEnc: text("enable_password_enc"),
    sshKeyEnc: text("ssh_key_enc"),
    sshKeyPassphraseEnc: text("ssh_key_passphrase_enc"),
    snmpCommunityEnc: text("snmp_community_enc"),
    snmpV3User: text("snmp_v3_user"),
    snmpV3AuthProtocol: text("snmp_v3_auth_protocol"),
    snmpV3AuthPasswordEnc: text("snmp_v3_auth_password_enc"),
    snmpV3PrivProtocol: text("snmp_v3_priv_protocol"),
    snmpV3PrivPasswordEnc: text("snmp_v3_priv_password_enc"),
    /** Tried, in id order, on devices set to discover their credentials and by discovery scans. */
    discovery: integer("discovery", { mode: "boolean" }).notNull().default(false),
    ...timestamps,
  },
  (t) => [uniqueIndex("credentials_name_key_unique").on(t.nameKey)],
);

/** Defaults a device created with device_profile_id inherits unless it sets them itself. */
export const deviceProfiles = sqliteTable(
  "device_profiles",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    nameKey: nameKeyColumn("name_key"),
    description: text("description").notNull().default(""),
    vendorId: integer("vendor_id").references(() => vendors.id, { onDelete: "set null" }),
    templateId: integer("template_id").references(() => templates.id, { onDelete: "set null" }),
    categoryId: integer("category_id").references(() => categories.id, { onDelete: "set null" }),
    credId: integer("cred_id").references(() => credentials.id, { onDelete: "set null" }),
    snippetCredId: integer("snippet_cred_id").references(() => credentials.id, { onDelete: "set null" }),
    port: integer("port"),
    tagIds: text("tag_ids", { mode: "json" }).$type<number[]>().notNull().default(sql`'[]'`),
    ...timestamps,
  },
  (t) => [uniqueIndex("device_profiles_name_key_unique").on(t.nameKey)],
);

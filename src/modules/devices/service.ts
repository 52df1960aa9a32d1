import { and, count, eq, inArray, isNull, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db, DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import {
  categories,
  credentials,
  deviceProfiles,
  deviceTags,
  devices,
  DEVICE_STATUSES,
  tags,
  templates,
  vendors,
  zones,
  zoneTags,
  LOCAL_ZONE_ID,
} from "../../db/schema/index.ts";
import { deviceScopeCondition, isInScope, type DeviceScope } from "../../platform/auth/scope.ts";
import { deviceStateCounts, newestBackupAndDownload } from "./state-counts.ts";
import { ApiError, FieldErrorBag } from "../../platform/http/errors.ts";
import { canonicalAddress } from "../../platform/http/host.ts";
import { containsText, type ListQuery, type ListSpec } from "../../platform/http/list.ts";
import { booleanFilter, idFilter, wholeNumbers } from "../../platform/http/filters.ts";
import type { SecretBox } from "../../platform/secrets/box.ts";
import { changedFields, recordActivities, recordActivity, type Actor } from "../../platform/audit/record.ts";
import { deviceRefs, recordEvents, type NewEvent } from "../../platform/outbox/record.ts";
import { getSettings } from "../../platform/settings/service.ts";
import { builtinTemplatesByVendor } from "../templates/index.ts";
import { whyNotUsable, type CredentialUser } from "../credentials/index.ts";
import {
  CUSTOM_KEY,
  CUSTOM_KEY_RULE,
  DEVICE_FIELDS,
  type DeviceInputT,
  type DeviceOut,
  type DevicePatchT,
} from "./schemas.ts";

type DeviceRow = typeof devices.$inferSelect;
type DeviceValues = Partial<typeof devices.$inferInsert>;

const lower = (column: SQLWrapper) => sql`lower(${column})`;

const tagNameMatch = (names: string[]) =>
  inArray(
    devices.id,
    sql`(select ${deviceTags.deviceId} from ${deviceTags} join ${tags} on ${tags.id} = ${deviceTags.tagId} where ${inArray(tags.nameKey, names.map(nameKey))})`,
  );

/** Ids where 0 means "none" (own credentials), as the API writes them. */
const optionalRefFilter = (column: SQLiteColumn, name: string, what: string) => ({
  describe: `${what} id (0 = none)`,
  build: (v: string[]) => {
    const ids = wholeNumbers(`filter[${name}]`, v);
    const real = ids.filter((id) => id > 0);
    const parts: SQL[] = [];
    if (ids.includes(0)) parts.push(isNull(column));
    if (real.length) parts.push(inArray(column, real));
    return or(...parts)!;
  },
});

export const deviceListSpec: ListSpec = {
  fields: DEVICE_FIELDS,
  filters: {
    id: idFilter(devices.id, "id", "Device id"),
    device_name: { describe: "Exact device name (any case)", build: (v) => inArray(devices.nameKey, v.map(nameKey)) },
    device_ip: { describe: "Exact management address", build: (v) => inArray(devices.ip, v) },
    device_vendor: {
      describe: "Vendor name (any case)",
      build: (v) =>
        inArray(
          devices.vendorId,
          sql`(select ${vendors.id} from ${vendors} where ${inArray(vendors.nameKey, v.map(nameKey))})`,
        ),
    },
    device_vendor_id: idFilter(devices.vendorId, "device_vendor_id", "Vendor id"),
    device_model: {
      describe: "Exact model (any case)",
      build: (v) =>
        inArray(
          lower(devices.model),
          v.map((s) => s.toLowerCase()),
        ),
    },
    device_serial: {
      describe: "Exact serial number (any case)",
      build: (v) =>
        inArray(
          lower(devices.serial),
          v.map((s) => s.toLowerCase()),
        ),
    },
    device_os_version: {
      describe: "Exact OS version (any case)",
      build: (v) =>
        inArray(
          lower(devices.osVersion),
          v.map((s) => s.toLowerCase()),
        ),
    },
    device_hostname: {
      describe: "Exact host name the device gives (any case)",
      build: (v) =>
        inArray(
          lower(devices.hostname),
          v.map((s) => s.toLowerCase()),
        ),
    },
    device_category_id: idFilter(devices.categoryId, "device_category_id", "Category id"),
    device_template_id: idFilter(devices.templateId, "device_template_id", "Template id"),
    device_profile_id: idFilter(devices.profileId, "device_profile_id", "Device profile id"),
    zone_id: idFilter(devices.zoneId, "zone_id", "Zone id"),
    device_cred_id: optionalRefFilter(devices.credId, "device_cred_id", "credential set"),
    device_tags: { describe: "Tag name (any case); a device matches if it has any of them", build: tagNameMatch },
    device_tag_id: {
      describe: "Tag id; a device matches if it has any of them",
      example: "1",
      build: (v) =>
        inArray(
          devices.id,
          sql`(select ${deviceTags.deviceId} from ${deviceTags} where ${inArray(deviceTags.tagId, wholeNumbers("filter[device_tag_id]", v))})`,
        ),
    },
    status: {
      describe: `Reachability: ${DEVICE_STATUSES.join(", ")}`,
      example: "unreachable",
      build: (v) => {
        const bad = v.filter((s) => !(DEVICE_STATUSES as readonly string[]).includes(s));
        if (bad.length) throw new ApiError(422, `status must be one of: ${DEVICE_STATUSES.join(", ")}`);
        return inArray(devices.status, v as (typeof DEVICE_STATUSES)[number][]);
      },
    },
    enabled: booleanFilter(devices.enabled, "enabled"),
  },
  prefixFilter: {
    prefix: "custom.",
    describe: "A custom attribute, e.g. filter[custom.site]=ams",
    build: (key, values) => {
      if (!CUSTOM_KEY.test(key)) throw new ApiError(422, CUSTOM_KEY_RULE);
      return inArray(sql`cast(json_extract(${devices.custom}, ${"$." + key}) as text)`, values);
    },
  },
  sorts: {
    id: devices.id,
    device_name: lower(devices.name),
    device_ip: devices.ip,
    device_vendor: lower(vendors.name),
    device_model: lower(devices.model),
    status: devices.status,
    enabled: devices.enabled,
    last_seen_at: devices.lastSeenAt,
    last_backup_at: devices.lastBackupAt,
    created_at: devices.createdAt,
    updated_at: devices.updatedAt,
  },
  defaultSort: "id",
  idColumn: devices.id,
  search: {
    describe: "Substring of the name, address, model, vendor or a tag (any case)",
    build: (term) =>
      or(
        containsText(devices.name, term),
        containsText(devices.ip, term),
        containsText(devices.model, term),
        inArray(
          devices.vendorId,
          sql`(select ${vendors.id} from ${vendors} where ${containsText(vendors.name, term)})`,
        ),
        inArray(
          devices.id,
          sql`(select ${deviceTags.deviceId} from ${deviceTags} join ${tags} on ${tags.id} = ${deviceTags.tagId} where ${containsText(tags.name, term)})`,
        ),
      )!,
  },
};

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** Rows -> API records: one query for the page's tags, vendor names from the join. */
async function serialize(db: DbOrTx, rows: (DeviceRow & { vendorName: string | null })[]): Promise<DeviceOut[]> {
  const tagsByDevice = new Map<number, string[]>();
  if (rows.length) {
    const tagRows = await db
      .select({ deviceId: deviceTags.deviceId, name: tags.name })
      .from(deviceTags)
      .innerJoin(tags, eq(tags.id, deviceTags.tagId))
      .where(
        inArray(
          deviceTags.deviceId,
          rows.map((r) => r.id),
        ),
      )
      .orderBy(tags.name);
    for (const t of tagRows)
      (tagsByDevice.get(t.deviceId) ?? tagsByDevice.set(t.deviceId, []).get(t.deviceId)!).push(t.name);
  }
  return rows.map((r) => ({
    id: r.id,
    device_name: r.name,
    device_ip: r.ip,
    device_vendor: r.vendorName,
    device_vendor_id: r.vendorId,
    device_model: r.model,
    device_category_id: r.categoryId,
    device_template_id: r.templateId,
    device_cred_id: r.credId ?? 0,
    device_snippet_cred_id: r.snippetCredId ?? 0,
    device_port_override: r.portOverride,
    device_profile_id: r.profileId,
    zone_id: r.zoneId,
    device_tags: tagsByDevice.get(r.id) ?? [],
    device_username: r.username,
    has_password: r.passwordEnc !== null,
    has_enable_password: r.enablePasswordEnc !== null,
    custom: r.custom,
    notes: r.notes,
    device_discover_credentials: r.discoverCredentials,
    device_serial: r.serial,
    device_os_version: r.osVersion,
    device_hostname: r.hostname,
    inventory_at: iso(r.inventoryAt),
    enabled: r.enabled,
    status: r.status,
    last_seen_at: iso(r.lastSeenAt),
    last_backup_at: iso(r.lastBackupAt),
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  }));
}

const selectDevices = (db: DbOrTx) =>
  db
    .select({ device: devices, vendorName: vendors.name })
    .from(devices)
    .leftJoin(vendors, eq(vendors.id, devices.vendorId));

const flatten = (rows: { device: DeviceRow; vendorName: string | null }[]) =>
  rows.map((r) => ({ ...r.device, vendorName: r.vendorName }));

/** One page of the device list, as listDevices reads it (list-plan.test.ts asserts its query plans). */
export const devicePageQuery = (db: DbOrTx, scope: DeviceScope, q: ListQuery) =>
  selectDevices(db)
    .where(and(deviceScopeCondition(scope), q.where))
    .orderBy(...q.orderBy)
    .limit(q.perPage)
    .offset((q.page - 1) * q.perPage);

export async function listDevices(
  db: Db,
  scope: DeviceScope,
  q: ListQuery,
): Promise<{ total: number; rows: DeviceOut[] }> {
  const where = and(deviceScopeCondition(scope), q.where);
  const [page, [totalRow]] = await Promise.all([
    devicePageQuery(db, scope, q),
    // No join: filters and search reach vendors through subqueries, and SQLite would not drop the join itself.
    db.select({ n: count() }).from(devices).where(where),
  ]);
  return { total: totalRow?.n ?? 0, rows: await serialize(db, flatten(page)) };
}

async function findInScope(
  db: DbOrTx,
  scope: DeviceScope,
  ids: number[],
): Promise<Map<number, DeviceRow & { vendorName: string | null }>> {
  if (!ids.length) return new Map();
  const rows = flatten(await selectDevices(db).where(and(inArray(devices.id, ids), deviceScopeCondition(scope))));
  return new Map(rows.map((r) => [r.id, r]));
}

export async function getDevice(db: DbOrTx, scope: DeviceScope, id: number): Promise<DeviceOut> {
  const row = (await findInScope(db, scope, [id])).get(id);
  if (!row) throw ApiError.notFound(`Device ${id}`);
  return (await serialize(db, [row]))[0]!;
}

async function getMany(db: DbOrTx, ids: number[]): Promise<DeviceOut[]> {
  const byId = await findInScope(db, { all: true }, ids);
  return serialize(
    db,
    ids.map((id) => byId.get(id)!),
  );
}

/** The small reference tables a device write checks against, read once per request. */
async function loadReferences(db: DbOrTx) {
  const [
    vendorRows,
    categoryRows,
    templateRows,
    credRows,
    profileRows,
    tagRows,
    stored,
    builtins,
    zoneRows,
    zoneTagRows,
  ] = await Promise.all([
    db.select({ id: vendors.id, name: vendors.name }).from(vendors).orderBy(vendors.name),
    db.select({ id: categories.id }).from(categories),
    db.select({ id: templates.id }).from(templates),
    db.select({ id: credentials.id }).from(credentials),
    db.select().from(deviceProfiles),
    db.select({ id: tags.id, name: tags.name }).from(tags),
    getSettings(db),
    builtinTemplatesByVendor(db),
    db.select({ id: zones.id }).from(zones),
    db.select().from(zoneTags),
  ]);
  const vendorIds = new Map(vendorRows.map((v) => [nameKey(v.name), v.id]));
  return {
    vendors: vendorIds,
    /** The built-in template of each vendor that has exactly one: a new device of that vendor gets it by default. */
    onlyBuiltinTemplate: new Map(
      [...builtins].flatMap(([key, ids]) =>
        ids.length === 1 && vendorIds.has(key) ? [[vendorIds.get(key)!, ids[0]!] as const] : [],
      ),
    ),
    vendorNames: vendorRows.map((v) => v.name),
    categoryIds: new Set(categoryRows.map((r) => r.id)),
    templateIds: new Set(templateRows.map((r) => r.id)),
    credIds: new Set(credRows.map((r) => r.id)),
    profiles: new Map(profileRows.map((p) => [p.id, p])),
    tags: new Map(tagRows.map((t) => [nameKey(t.name), t.id])),
    zoneIds: new Set(zoneRows.map((z) => z.id)),
    /** The tags each zone gives its devices (role scopes follow them). */
    zoneTagIds: (zoneId: number) => zoneTagRows.filter((t) => t.zoneId === zoneId).map((t) => t.tagId),
    /** The settings' credential for new devices, if it still exists (settings are read per request: no restart). */
    defaultCredId: credRows.some((r) => r.id === stored.settings.default_credential_id)
      ? stored.settings.default_credential_id
      : null,
  };
}
type References = Awaited<ReturnType<typeof loadReferences>>;

type Mode = "create" | "replace" | "patch";
type Resolved = { values: DeviceValues; tagNames: string[] | undefined };

/**
 * Turns one API input into column values, checking every reference. `replace` (PUT) resets what the body
 * leaves out to its default, except secrets: they cannot be read back, so a client could not resend them.
 */
async function resolveInput(
  input: DevicePatchT,
  mode: Mode,
  refs: References,
  secrets: SecretBox,
  bag: FieldErrorBag,
  prefix: string,
): Promise<Resolved> {
  const given = <K extends keyof DevicePatchT>(k: K) => input[k] !== undefined;
  const v: DeviceValues = {};
  let tagNames = input.device_tags;

  if (mode !== "patch") {
    Object.assign(v, {
      vendorId: null,
      model: "",
      categoryId: null,
      templateId: null,
      credId: null,
      snippetCredId: null,
      portOverride: null,
      profileId: null,
      zoneId: LOCAL_ZONE_ID,
      username: "",
      custom: {},
      notes: "",
      enabled: true,
    } satisfies DeviceValues);
    tagNames ??= [];
  }

  // A profile fills what the body leaves unset, on create only: editing a profile later never rewrites devices.
  const profileId = input.device_profile_id;
  if (given("device_profile_id")) {
    if (profileId && !refs.profiles.has(profileId))
      bag.add(`${prefix}device_profile_id`, `${prefix}device_profile_id ${profileId} does not exist`);
    v.profileId = profileId || null;
  }
  const profile = mode === "create" && profileId ? refs.profiles.get(profileId) : undefined;
  if (profile) {
    if (!given("device_vendor") && profile.vendorId) v.vendorId = profile.vendorId;
    if (!given("device_template_id")) v.templateId = profile.templateId;
    if (!given("device_category_id")) v.categoryId = profile.categoryId;
    if (!given("device_cred_id")) v.credId = profile.credId;
    if (!given("device_snippet_cred_id")) v.snippetCredId = profile.snippetCredId;
    if (!given("device_port_override")) v.portOverride = profile.port;
    if (!given("device_tags")) {
      const names = new Map([...refs.tags].map(([name, id]) => [id, name]));
      tagNames = profile.tagIds.map((id) => names.get(id)).filter((n): n is string => Boolean(n));
    }
  }

  // A new device sent with no login of its own (no credential set, no username or password, none from a profile)
  // gets the settings' default credential.
  if (
    mode === "create" &&
    !v.credId &&
    refs.defaultCredId &&
    !given("device_cred_id") &&
    !given("device_username") &&
    !given("device_password")
  ) {
    v.credId = refs.defaultCredId;
  }
  if (given("device_name")) Object.assign(v, { name: input.device_name!, nameKey: nameKey(input.device_name!) });
  if (given("device_ip")) v.ip = canonicalAddress(input.device_ip!);
  if (given("device_model")) v.model = input.device_model!;
  if (given("device_username")) v.username = input.device_username!;
  if (given("notes")) v.notes = input.notes!;
  if (given("custom")) v.custom = input.custom!;
  if (given("enabled")) v.enabled = input.enabled!;
  if (given("device_discover_credentials")) v.discoverCredentials = input.device_discover_credentials!;
  if (given("device_port_override")) v.portOverride = input.device_port_override ?? null;
  if (given("zone_id")) {
    if (!refs.zoneIds.has(input.zone_id!))
      bag.add(`${prefix}zone_id`, `${prefix}zone_id ${input.zone_id} is not an existing zone`);
    v.zoneId = input.zone_id!;
  }

  if (given("device_vendor")) {
    const name = input.device_vendor;
    if (name === null || name === "") v.vendorId = null;
    else {
      const id = refs.vendors.get(nameKey(name!));
      if (id === undefined)
        bag.add(
          `${prefix}device_vendor`,
          `${prefix}device_vendor '${name}' is not a known vendor; use one of: ${refs.vendorNames.join(", ")}`,
        );
      else v.vendorId = id;
    }
  }

  const reference = (
    key: "device_category_id" | "device_template_id" | "device_cred_id" | "device_snippet_cred_id",
    known: Set<number>,
    what: string,
  ) => {
    if (!given(key)) return undefined;
    const id = input[key];
    if (!id) return null;
    if (!known.has(id)) bag.add(`${prefix}${key}`, `${prefix}${key} ${id} is not an existing ${what}`);
    return id;
  };
  const categoryId = reference("device_category_id", refs.categoryIds, "category");
  if (categoryId !== undefined) v.categoryId = categoryId;
  const templateId = reference("device_template_id", refs.templateIds, "template");
  if (templateId !== undefined) v.templateId = templateId;
  const credId = reference("device_cred_id", refs.credIds, "credential set");
  if (credId !== undefined) v.credId = credId;
  const snippetCredId = reference("device_snippet_cred_id", refs.credIds, "credential set");
  if (snippetCredId !== undefined) v.snippetCredId = snippetCredId;
  // Without a template a device can never be backed up: a new one whose vendor has exactly one built-in gets it.
  if (mode === "create" && !v.templateId && !given("device_template_id") && v.vendorId) {
    v.templateId = refs.onlyBuiltinTemplate.get(v.vendorId) ?? null;
  }

  if (given("device_password"))
    v.passwordEnc = input.device_password ? await secrets.encrypt(input.device_password) : null;
  if (given("device_enable_password")) {
    v.enablePasswordEnc = input.device_enable_password ? await secrets.encrypt(input.device_enable_password) : null;
  }
  return { values: v, tagNames: tagNames && [...new Map(tagNames.map((n) => [nameKey(n), n])).values()] };
}

async function existingNames(db: DbOrTx, keys: string[]): Promise<Map<string, number>> {
  if (!keys.length) return new Map();
  const rows = await db
    .select({ id: devices.id, key: devices.nameKey })
    .from(devices)
    .where(inArray(devices.nameKey, keys));
  return new Map(rows.map((r) => [r.key, r.id]));
}

/** Rows per multi-row statement: SQLite allows 32,766 variables a statement; a link takes 2, a device 25. */
const LINKS_PER_STATEMENT = 5_000;
const DEVICES_PER_INSERT = 500;

/** Sets each device's tags to the names given, creating unknown tags; one delete and few inserts for all. */
async function replaceTags(
  tx: DbOrTx,
  sets: { deviceId: number; names: string[] }[],
  refs: References,
  now: Date,
): Promise<void> {
  if (!sets.length) return;
  for (let i = 0; i < sets.length; i += LINKS_PER_STATEMENT) {
    await tx.delete(deviceTags).where(
      inArray(
        deviceTags.deviceId,
        sets.slice(i, i + LINKS_PER_STATEMENT).map((s) => s.deviceId),
      ),
    );
  }
  const links: (typeof deviceTags.$inferInsert)[] = [];
  for (const { deviceId, names } of sets) {
    for (const name of names) {
      let id = refs.tags.get(nameKey(name));
      if (id === undefined) {
        const [row] = await tx
          .insert(tags)
          .values({ name, nameKey: nameKey(name), createdAt: now, updatedAt: now })
          .returning({ id: tags.id });
        id = row!.id;
        refs.tags.set(nameKey(name), id);
      }
      links.push({ deviceId, tagId: id });
    }
  }
  for (let i = 0; i < links.length; i += LINKS_PER_STATEMENT)
    await tx.insert(deviceTags).values(links.slice(i, i + LINKS_PER_STATEMENT));
}

/** The write-only fields a write sets: named as changed, never with their values. */
const secretFieldsSet = (input: DevicePatchT) =>
  (["device_password", "device_enable_password"] as const).filter((k) => input[k] !== undefined);

/** db may be a transaction: an import runs many device writes inside its own, each becoming a savepoint. */
export type WriteContext = {
  db: DbOrTx;
  secrets: SecretBox;
  actor: Actor;
  scope: DeviceScope;
  abilities: CredentialUser["abilities"];
  now: Date;
};
type WriteItem = { input: DevicePatchT; id?: number };

/**
 * The one write path for devices: single and bulk, create, replace and patch. Everything is checked before
 * anything is written, every problem is reported with its item's index (`devices.3.device_name`), and the
 * writes run in one transaction, so a request lands whole or not at all.
 */
async function writeDevices(ctx: WriteContext, mode: Mode, items: WriteItem[], bulk: boolean): Promise<DeviceOut[]> {
  return ctx.db.transaction(async (tx) => {
    const bag = new FieldErrorBag();
    const refs = await loadReferences(tx);
    const prefixOf = (i: number) => (bulk ? `devices.${i}.` : "");

    const existing = await findInScope(
      tx,
      ctx.scope,
      items.flatMap((it) => (it.id ? [it.id] : [])),
    );
    if (!bulk && items[0]!.id && !existing.has(items[0]!.id)) throw ApiError.notFound(`Device ${items[0]!.id}`);
    const existingTagIds = new Map<number, number[]>();
    if (existing.size) {
      const rows = await tx
        .select()
        .from(deviceTags)
        .where(inArray(deviceTags.deviceId, [...existing.keys()]));
      for (const r of rows)
        (existingTagIds.get(r.deviceId) ?? existingTagIds.set(r.deviceId, []).get(r.deviceId)!).push(r.tagId);
    }

    const resolved: Resolved[] = [];
    for (const [i, item] of items.entries()) {
      if (item.id && !existing.has(item.id))
        bag.add(`${prefixOf(i)}id`, `${prefixOf(i)}id ${item.id} is not an existing device`);
      resolved.push(await resolveInput(item.input, mode, refs, ctx.secrets, bag, prefixOf(i)));
    }

    // Names are unique under the folding rule (name-key.ts), against the database and within the request.
    const finalNames = resolved.map((r, i) => r.values.nameKey ?? existing.get(items[i]!.id ?? 0)?.nameKey);
    const taken = await existingNames(
      tx,
      finalNames.filter((n): n is string => Boolean(n)),
    );
    const seen = new Map<string, number>();
    finalNames.forEach((name, i) => {
      if (!name || resolved[i]!.values.name === undefined) return;
      const owner = taken.get(name);
      const field = `${prefixOf(i)}device_name`;
      if (owner !== undefined && owner !== items[i]!.id)
        bag.add(field, `${field} '${resolved[i]!.values.name}' is already taken`);
      else if (seen.has(name))
        bag.add(field, `${field} '${resolved[i]!.values.name}' repeats item ${seen.get(name)} of this request`);
      seen.set(name, i);
    });

    // Every device names its vendor (rConfig requires device_vendor): on create and replace it comes from the body
    // or the profile; a patch may leave an older vendorless device as it is, but may not clear a vendor.
    resolved.forEach((r, i) => {
      const vendorId =
        r.values.vendorId !== undefined ? r.values.vendorId : (existing.get(items[i]!.id ?? 0)?.vendorId ?? null);
      const field = `${prefixOf(i)}device_vendor`;
      if (vendorId !== null || bag.errors[field]) return;
      if (mode !== "patch" || r.values.vendorId === null) {
        bag.add(
          field,
          `${field} is required: one of ${refs.vendorNames.join(", ")} (or a device_profile_id whose profile names a vendor)`,
        );
      }
    });

    // A scoped user may not create or move a device out of their own sight.
    if (!ctx.scope.all) {
      resolved.forEach((r, i) => {
        const before = items[i]!.id ? existing.get(items[i]!.id!) : undefined;
        const tagIds = r.tagNames
          ? r.tagNames.map((n) => refs.tags.get(nameKey(n))).filter((t): t is number => t !== undefined)
          : (existingTagIds.get(before?.id ?? 0) ?? []);
        const categoryId = r.values.categoryId !== undefined ? r.values.categoryId : (before?.categoryId ?? null);
        const zoneId = r.values.zoneId ?? before?.zoneId ?? LOCAL_ZONE_ID;
        if (!isInScope(ctx.scope, { tagIds: [...tagIds, ...refs.zoneTagIds(zoneId)], categoryId })) {
          bag.add(
            `${prefixOf(i)}device_tags`,
            `${prefixOf(i)}device_tags would put the device outside your scope; give it one of your role's tags or categories`,
          );
        }
      });
    }
    bag.throwIfAny();
    await refuseCredentialsNotUsable(tx, ctx, items, resolved, existing, prefixOf);

    // Set-wise from here: a statement per updated device; new devices, tag links and audit rows in a few multi-row
    // statements; the records before and after read once. A 10,000-row import (one transaction, import-apply.ts)
    // holds the write lock 2-3 s this way, against about 12 s a device at a time.
    const befores = new Map((await serialize(tx, [...existing.values()])).map((d) => [d.id, d]));
    const ids = items.map((item) => item.id ?? 0);
    for (const [i, item] of items.entries()) {
      if (item.id)
        await tx
          .update(devices)
          .set({ ...resolved[i]!.values, updatedAt: ctx.now })
          .where(eq(devices.id, item.id));
    }
    // New devices go in a few multi-row inserts; names are unique in the request, so they pair rows with ids.
    const creating = items.flatMap((item, i) => (item.id ? [] : [i]));
    for (let from = 0; from < creating.length; from += DEVICES_PER_INSERT) {
      const batch = creating.slice(from, from + DEVICES_PER_INSERT);
      const rows = await tx
        .insert(devices)
        .values(
          batch.map((i) => ({
            ...(resolved[i]!.values as typeof devices.$inferInsert),
            createdAt: ctx.now,
            updatedAt: ctx.now,
          })),
        )
        .returning({ id: devices.id, name: devices.name });
      const idByName = new Map(rows.map((r) => [r.name, r.id]));
      for (const i of batch) ids[i] = idByName.get(resolved[i]!.values.name!)!;
    }
    await replaceTags(
      tx,
      ids.flatMap((id, i) => (resolved[i]!.tagNames ? [{ deviceId: id, names: resolved[i]!.tagNames! }] : [])),
      refs,
      ctx.now,
    );
    const afters = await getMany(tx, ids);
    const eventDevices = await deviceRefs(tx, ids);
    await recordEvents(
      tx,
      items.flatMap((item, i): NewEvent[] => {
        const device = eventDevices.get(ids[i]!)!;
        if (!item.id) return [{ type: "device.created", payload: { device } }];
        const changed = [
          ...Object.keys(changedFields(befores.get(item.id)!, afters[i]!)),
          ...secretFieldsSet(item.input),
        ];
        return changed.length ? [{ type: "device.updated", payload: { device, changed: [...new Set(changed)] } }] : [];
      }),
      ctx.now,
    );
    await recordActivities(
      tx,
      ctx.actor,
      items.map((item, i) => {
        const before = item.id ? befores.get(item.id)! : null;
        const secretsSet = secretFieldsSet(item.input);
        return {
          action: before ? "device.update" : "device.create",
          subjectType: "device",
          subjectId: ids[i]!,
          before,
          after: afters[i]!,
          secretsSet,
        };
      }),
      ctx.now,
    );
    return afters;
  });
}

export const createDevices = (ctx: WriteContext, inputs: DeviceInputT[], bulk: boolean) =>
  writeDevices(
    ctx,
    "create",
    inputs.map((input) => ({ input })),
    bulk,
  );

export const updateDevices = (
  ctx: WriteContext,
  items: (DevicePatchT & { id: number })[],
  replace: boolean,
  bulk: boolean,
) =>
  writeDevices(
    ctx,
    replace ? "replace" : "patch",
    items.map(({ id, ...input }) => ({ id, input })),
    bulk,
  );

const CREDENTIAL_COLUMNS = [
  ["credId", "device_cred_id"],
  ["snippetCredId", "device_snippet_cred_id"],
] as const;

/**
 * A device ends a write with a credential set the caller may not use (credentials/use.ts) only if it had that set
 * already and keeps its address and port: attaching one (sent, or from the settings' default or a profile), or
 * moving a device that has one to another address or port (its credentials would go there), is refused with 403.
 */
async function refuseCredentialsNotUsable(
  tx: DbOrTx,
  ctx: WriteContext,
  items: WriteItem[],
  resolved: Resolved[],
  existing: Map<number, DeviceRow>,
  prefixOf: (i: number) => string,
): Promise<void> {
  const who = { abilities: ctx.abilities, scope: ctx.scope };
  if (who.abilities === "all" && who.scope.all) return;
  const verdicts = new Map<number, Promise<string | null>>();
  const problems = new FieldErrorBag();
  for (const [i, { values }] of resolved.entries()) {
    const before = items[i]!.id ? existing.get(items[i]!.id!) : undefined;
    const moved =
      before !== undefined &&
      ((values.ip !== undefined && values.ip !== before.ip) ||
        (values.portOverride !== undefined && values.portOverride !== before.portOverride));
    for (const [column, field] of CREDENTIAL_COLUMNS) {
      const setId = values[column] !== undefined ? values[column] : (before?.[column] ?? null);
      if (!setId || (before && setId === before[column] && !moved)) continue;
      if (!verdicts.has(setId)) verdicts.set(setId, whyNotUsable(tx, who, setId));
      const why = await verdicts.get(setId)!;
      if (!why) continue;
      const attached = !before || setId !== before[column];
      const sent = items[i]!.input[field] !== undefined;
      const key = `${prefixOf(i)}${attached ? field : "device_ip"}`;
      problems.add(
        key,
        attached
          ? `${prefixOf(i)}${field}: ${why}` +
              (sent
                ? ""
                : ` (the set comes from the settings' default or the device profile, as ${field} was not sent: send ${field} 0 and the device's own login instead)`)
          : `${prefixOf(i)}device_ip: the device logs in with credential set ${setId}, and changing its address or port would send that set's credentials to the new one; ${why}. ` +
              `Send ${field} 0 with the device's own login, or a set you may use, in the same request`,
      );
    }
  }
  // Every refused item is named, as in a 422, so an import can set those rows aside and write the rest.
  if (!problems.empty) throw new ApiError(403, ApiError.validation(problems.errors).message, problems.errors);
}

/** Ids outside the scope are reported exactly like ids that do not exist. */
async function requireAll(tx: DbOrTx, scope: DeviceScope, ids: number[], bulk: boolean) {
  const found = await findInScope(tx, scope, ids);
  const bag = new FieldErrorBag();
  ids.forEach((id, i) => {
    if (found.has(id)) return;
    if (!bulk) throw ApiError.notFound(`Device ${id}`);
    bag.add(`ids.${i}`, `ids.${i} ${id} is not an existing device`);
  });
  bag.throwIfAny();
  return serialize(
    tx,
    ids.map((id) => found.get(id)!),
  );
}

export async function deleteDevices(ctx: WriteContext, ids: number[], bulk: boolean): Promise<number> {
  const unique = [...new Set(ids)];
  return ctx.db.transaction(async (tx) => {
    const before = await requireAll(tx, ctx.scope, unique, bulk);
    const refs = await deviceRefs(tx, unique);
    await tx.delete(devices).where(inArray(devices.id, unique));
    await recordEvents(
      tx,
      unique.map((id) => ({ type: "device.deleted", payload: { device: refs.get(id)! } })),
      ctx.now,
    );
    for (const b of before) {
      await recordActivity(
        tx,
        ctx.actor,
        { action: "device.delete", subjectType: "device", subjectId: b.id, before: b, after: null },
        ctx.now,
      );
    }
    return unique.length;
  });
}

export async function setDevicesEnabled(
  ctx: WriteContext,
  ids: number[],
  enabled: boolean,
  bulk: boolean,
): Promise<DeviceOut[]> {
  const unique = [...new Set(ids)];
  return ctx.db.transaction(async (tx) => {
    const before = await requireAll(tx, ctx.scope, unique, bulk);
    await tx.update(devices).set({ enabled, updatedAt: ctx.now }).where(inArray(devices.id, unique));
    const after = await getMany(tx, unique);
    const flipped = unique.filter((_, i) => before[i]!.enabled !== enabled);
    const refs = await deviceRefs(tx, flipped);
    await recordEvents(
      tx,
      flipped.map((id) => ({ type: "device.updated", payload: { device: refs.get(id)!, changed: ["enabled"] } })),
      ctx.now,
    );
    for (const [i, b] of before.entries()) {
      if (b.enabled === enabled) continue;
      await recordActivity(
        tx,
        ctx.actor,
        {
          action: enabled ? "device.enable" : "device.disable",
          subjectType: "device",
          subjectId: b.id,
          before: b,
          after: after[i]!,
        },
        ctx.now,
      );
    }
    return after;
  });
}

/** The fleet's devices by state: counters kept on write, and the newest backup from its index (state-counts.ts). */
export async function deviceSummary(db: Db, scope: DeviceScope) {
  const [counts, newest] = await Promise.all([deviceStateCounts(db, scope), newestBackupAndDownload(db, scope)]);
  return {
    total: counts.total,
    up: counts.enabledByStatus.up,
    unreachable: counts.enabledByStatus.unreachable,
    unknown: counts.enabledByStatus.unknown,
    disabled: counts.disabled,
    never_backed_up: counts.neverBackedUp,
    last_backup_at: iso(newest.lastBackupAt),
  };
}

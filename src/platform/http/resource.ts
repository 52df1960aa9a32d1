import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Context } from "hono";
import type { Resource } from "../auth/abilities.ts";
import { refuseUnlessScopeCovers, type DeviceReach, type DeviceScope } from "../auth/scope.ts";
import type { Db, DbOrTx } from "../../db/client.ts";
import { nameKey } from "../../db/name-key.ts";
import { recordActivity } from "../audit/record.ts";
import type { AppEnv, AuthContext, Services } from "./env.ts";
import { ApiError, FieldErrorBag } from "./errors.ts";
import {
  listEnvelope,
  listEnvelopeSchema,
  listQuerySchema,
  parseListQuery,
  type ListQuery,
  type ListSpec,
} from "./list.ts";
import { apiRoute, jsonBody, jsonResponse, MessageBody, pathIds } from "./route.ts";

type Table = SQLiteTable & { id: SQLiteColumn };
type Row = { id: number } & Record<string, unknown>;
type Out = { id: number } & Record<string, unknown>;

/** What a write hook gets: the transaction, the caller, and the services (secrets, clock). */
export type WriteCtx = {
  tx: DbOrTx;
  auth: AuthContext;
  services: Services;
  now: Date;
  bag: FieldErrorBag;
  /** create and replace (PUT) apply defaults for what the body leaves out; patch touches only what was sent. */
  mode: "create" | "replace" | "patch" | "delete";
  /**
   * Fields shown once, in this write's answer only (a zone's new enrollment key): never in the activity log,
   * and the row keeps only what cannot give them back (a hash).
   */
  once?: Record<string, unknown>;
};

/**
 * A resource group with the standard endpoints: list, show, create, replace (PUT), update (PATCH), delete and
 * bulk delete. Each group supplies only what differs: its table, schemas, list spec, how a row is shown, how
 * input becomes column values, and what deleting means for the records that refer to it.
 */
export type ResourceDef<I extends z.ZodObject> = {
  /** Group tag in the API description, e.g. "Vendors". */
  tag: string;
  /** Path under the version prefix, e.g. "/vendors". */
  path: string;
  /** Used in messages, activity actions and operationIds: "vendor" -> "Vendor 5 not found", "vendor.create". */
  singular: string;
  plural: string;
  resource: Resource;
  table: Table;
  output: z.ZodObject;
  input: I;
  listSpec: ListSpec;
  /** Rows as the API shows them to a caller with this scope: counts of devices count only the devices it holds. */
  serialize(db: DbOrTx, rows: Row[], scope: DeviceScope): Promise<Out[]>;
  /**
   * Column values for a create (existing = null), replace or patch (`input` holds only what was sent for a
   * patch). Problems go into ctx.bag under the field's name; nothing may be written here.
   */
  toValues(input: Partial<z.infer<I>>, existing: Row | null, ctx: WriteCtx): Promise<Record<string, unknown>>;
  /** Writes that follow the row's own (join tables); runs in the same transaction. */
  afterWrite?(id: number, input: Partial<z.infer<I>>, ctx: WriteCtx): Promise<void>;
  /**
   * Refuses (throw ApiError.conflict) or detaches what refers to these rows, in the delete's transaction; what
   * it returns ("removed from 3 devices") is added to the answer so the caller knows exactly what changed.
   */
  beforeDelete?(rows: Row[], ctx: WriteCtx): Promise<string | void>;
  /**
   * The devices these rows reach, for shared records (devices use them, or they decide what is done to devices):
   * a caller may create, change or delete one only when their scope covers every device it reaches, before the
   * write and after it (src/platform/auth/scope.ts, refuseUnlessScopeCovers; 403 otherwise).
   */
  reaches?(db: DbOrTx, ids: number[]): Promise<DeviceReach>;
  /**
   * Which rows a caller with this scope sees at all, for records that are about devices (undefined: every row).
   * A row outside it answers 404, as a device outside the scope does.
   */
  visibleTo?(scope: DeviceScope): SQL | undefined;
  /** A reason a row may not be changed or deleted (e.g. built-in records), answered with 403. */
  readOnlyReason?(row: Row): string | undefined;
  /** The largest create/replace/update body, in bytes, when a record can be larger than DEFAULT_BODY_LIMIT allows. */
  bodyLimit?: number;
  descriptions?: { create?: string; update?: string; delete?: string };
  /** When a replace or update answers 409 (a state rule refuses the change), as the API description says it. */
  updateConflict?: string;
};

/**
 * Who asks, and with which services: all a write needs of the request. The API's handlers pass their context's
 * variables; the web pages pass theirs, as plain arguments (a Hono context is still taken from the pages not yet
 * moved to this).
 */
export type Caller = { auth: AuthContext; services: Services };
const callerOf = (c: Caller | Context<AppEnv>): Caller => ("var" in c ? c.var : c);

/** Ends a delete's dry run: its transaction is rolled back, carrying what the delete would have said. */
class DryRun extends Error {}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .map(capitalise)
    .join("");

const IdParams = pathIds("id");
const BulkIds = z.object({
  ids: z
    .array(z.number().int().positive("must be a positive id"))
    .min(1, "must have at least 1 item")
    .max(1000, "must have at most 1000 items")
    .openapi({ example: [1, 2] }),
});

/**
 * Uniqueness of a name under the one folding rule (src/db/name-key.ts), reported as a field problem. Takes the
 * name's stored key column and returns the key to store with the name (undefined when the name is not being set).
 */
export async function checkUniqueName(
  // Only the transaction and the problem bag are read: a service outside a resource write passes just those.
  ctx: Pick<WriteCtx, "tx" | "bag"> & Partial<WriteCtx>,
  keyColumn: SQLiteColumn,
  idColumn: SQLiteColumn,
  value: string | undefined,
  ownId: number | null,
  field: string,
): Promise<string | undefined> {
  if (value === undefined) return undefined;
  const key = nameKey(value);
  const [clash] = await ctx.tx.select({ id: idColumn }).from(keyColumn.table).where(eq(keyColumn, key)).limit(1);
  if (clash && clash.id !== ownId) ctx.bag.add(field, `${field} '${value}' is already taken`);
  return key;
}

/** "<name> (copy)", then "(copy 2)", "(copy 3)" ... the first one no row of the key column's table has. */
export async function freeCopyName(tx: DbOrTx, keyColumn: SQLiteColumn, name: string): Promise<string> {
  const base = `${name} (copy`;
  const pattern = nameKey(base).replace(/[\\%_]/g, (m) => "\\" + m) + "%";
  const taken = new Set(
    (
      await tx.select({ key: keyColumn }).from(keyColumn.table).where(sql`${keyColumn} like ${pattern} escape '\\'`)
    ).map((r) => r.key as string),
  );
  for (let n = 1; ; n++) {
    const candidate = `${base}${n === 1 ? "" : ` ${n}`})`;
    if (!taken.has(nameKey(candidate))) return candidate;
  }
}

export function defineResource<I extends z.ZodObject>(def: ResourceDef<I>) {
  const { tag, path, singular, plural } = def;
  const read = `${def.resource}.read` as const;
  const write = `${def.resource}.write` as const;
  const Name = pascal(singular);
  const Names = pascal(plural);
  const one = z.object({ data: def.output });
  const scopeNote = def.reaches
    ? ` A caller whose role is scoped cannot create, change or delete a ${singular} that reaches devices outside the scope (403).`
    : "";
  const described = (text: string | undefined) => (text || scopeNote ? `${text ?? ""}${scopeNote}`.trim() : undefined);
  const updateConflict: Record<number, ReturnType<typeof jsonResponse>> = def.updateConflict
    ? { 409: jsonResponse(MessageBody, def.updateConflict) }
    : {};

  const routes = {
    list: apiRoute({
      method: "get",
      path,
      operationId: `list${Names}`,
      tag,
      ability: read,
      summary: `List ${plural}`,
      description: `A page of ${plural}, read with the query every list takes: page and per_page, sort, filter[<field>], fields${def.listSpec.search ? " and search" : ""}. An unknown filter, sort or field name is a 422.`,
      request: { query: listQuerySchema(def.listSpec) },
      responses: { 200: jsonResponse(listEnvelopeSchema(def.output), `A page of ${plural}`) },
    }),
    show: apiRoute({
      method: "get",
      path: `${path}/{id}`,
      operationId: `get${Name}`,
      tag,
      ability: read,
      summary: `Show a ${singular}`,
      description: `One ${singular} by its id, in data.`,
      request: { params: IdParams },
      responses: { 200: jsonResponse(one, `The ${singular}`) },
    }),
    create: apiRoute({
      method: "post",
      path,
      operationId: `create${Name}`,
      tag,
      ability: write,
      summary: `Create a ${singular}`,
      description: def.descriptions?.create ?? `Answers 201 with the new ${singular} in data and its URL in Location.`,
      request: jsonBody(def.input),
      bodyLimit: def.bodyLimit,
      responses: { 201: jsonResponse(one, `The created ${singular}; Location names its URL`) },
    }),
    replace: apiRoute({
      method: "put",
      path: `${path}/{id}`,
      operationId: `replace${Name}`,
      tag,
      ability: write,
      summary: `Replace a ${singular}`,
      description: described(
        def.descriptions?.update ??
          "Fields the body leaves out return to their defaults; write-only secrets are kept unless sent.",
      ),
      request: { params: IdParams, ...jsonBody(def.input) },
      bodyLimit: def.bodyLimit,
      responses: { 200: jsonResponse(one, `The updated ${singular}`), ...updateConflict },
    }),
    update: apiRoute({
      method: "patch",
      path: `${path}/{id}`,
      operationId: `update${Name}`,
      tag,
      ability: write,
      summary: `Update some fields of a ${singular}`,
      description: described(def.descriptions?.update ?? "Only the fields sent change."),
      request: { params: IdParams, ...jsonBody(def.input.partial()) },
      bodyLimit: def.bodyLimit,
      responses: { 200: jsonResponse(one, `The updated ${singular}`), ...updateConflict },
    }),
    delete: apiRoute({
      method: "delete",
      path: `${path}/{id}`,
      operationId: `delete${Name}`,
      tag,
      ability: write,
      summary: `Delete a ${singular}`,
      description: described(
        def.descriptions?.delete ?? `Deletes the ${singular}; the answer says what else changed with it.`,
      ),
      request: { params: IdParams },
      responses: {
        200: jsonResponse(MessageBody, "Deleted"),
        409: jsonResponse(MessageBody, `Other records still use the ${singular}`),
      },
    }),
    bulkDelete: apiRoute({
      method: "delete",
      path: `${path}/bulk`,
      operationId: `bulkDelete${Names}`,
      tag,
      ability: write,
      summary: `Delete many ${plural}`,
      description: described(`All or nothing, up to 1000 ids. ${def.descriptions?.delete ?? ""}`.trim()),
      request: jsonBody(BulkIds),
      responses: {
        200: jsonResponse(MessageBody, "Deleted"),
        409: jsonResponse(MessageBody, `Other records still use a ${singular}`),
      },
    }),
  };

  const fetchRows = async (db: DbOrTx, ids: number[], scope: DeviceScope): Promise<Map<number, Row>> => {
    if (!ids.length) return new Map();
    const rows = (await db
      .select()
      .from(def.table as SQLiteTable)
      .where(and(inArray(def.table.id, ids), def.visibleTo?.(scope)))) as Row[];
    return new Map(rows.map((r) => [r.id, r]));
  };

  const show = async (db: DbOrTx, id: number, scope: DeviceScope): Promise<Out> => {
    const row = (await fetchRows(db, [id], scope)).get(id);
    if (!row) throw ApiError.notFound(`${capitalise(singular)} ${id}`);
    return (await def.serialize(db, [row], scope))[0]!;
  };

  /** A page of the list as the API's list endpoint answers it (q from parseListQuery with the resource's listSpec). */
  const list = async (db: DbOrTx, scope: DeviceScope, q: ListQuery): Promise<{ total: number; rows: Out[] }> => {
    const where = and(q.where, def.visibleTo?.(scope));
    const [rows, [total]] = await Promise.all([
      db
        .select()
        .from(def.table as SQLiteTable)
        .where(where)
        .orderBy(...q.orderBy)
        .limit(q.perPage)
        .offset((q.page - 1) * q.perPage),
      db
        .select({ n: sql<number>`count(*)` })
        .from(def.table as SQLiteTable)
        .where(where),
    ]);
    return { total: Number(total?.n ?? 0), rows: await def.serialize(db, rows as Row[], scope) };
  };

  const refuseIfReachingBeyondScope = async (ctx: WriteCtx, ids: number[], created = false): Promise<void> => {
    if (ctx.auth.scope.all || !def.reaches) return;
    const what = created
      ? `The new ${singular}`
      : ids.length === 1
        ? `${capitalise(singular)} ${ids[0]}`
        : `One of the ${plural}`;
    await refuseUnlessScopeCovers(ctx.tx, ctx.auth.scope, what, await def.reaches(ctx.tx, ids));
  };

  const writeCtx = (c: Caller, tx: DbOrTx, mode: WriteCtx["mode"]): WriteCtx => ({
    tx,
    auth: c.auth,
    services: c.services,
    now: c.services.clock.now(),
    bag: new FieldErrorBag(),
    mode,
    once: {},
  });

  /** One write: validate everything, then write the row, its joins and the audit entry in one transaction. */
  const save = (
    caller: Caller | Context<AppEnv>,
    input: Partial<z.infer<I>>,
    id: number | null,
    mode: "create" | "replace" | "patch",
  ) =>
    callerOf(caller).services.db.transaction(async (tx) => {
      const ctx = writeCtx(callerOf(caller), tx, mode);
      const existing = id === null ? null : (await fetchRows(tx, [id], ctx.auth.scope)).get(id);
      if (existing === undefined) throw ApiError.notFound(`${capitalise(singular)} ${id}`);
      const reason = existing && def.readOnlyReason?.(existing);
      if (reason) throw new ApiError(403, reason);
      if (existing) await refuseIfReachingBeyondScope(ctx, [existing.id]);
      const values = await def.toValues(input, existing, ctx);
      ctx.bag.throwIfAny();
      // Read before writing: fields kept in join tables (a command's categories) would otherwise look unchanged.
      const before = existing ? (await def.serialize(tx, [existing], ctx.auth.scope))[0]! : null;
      let savedId: number;
      if (existing) {
        await tx
          .update(def.table)
          .set({ ...values, updatedAt: ctx.now })
          .where(eq(def.table.id, existing.id));
        savedId = existing.id;
      } else {
        const [row] = (await tx
          .insert(def.table)
          .values({ ...values, createdAt: ctx.now, updatedAt: ctx.now })
          .returning({ id: def.table.id })) as { id: number }[];
        savedId = row!.id;
      }
      await def.afterWrite?.(savedId, input, ctx);
      ctx.bag.throwIfAny();
      // What the record reaches once written (a command put into a category, an assignment's new devices): the
      // refusal rolls the write back.
      await refuseIfReachingBeyondScope(ctx, [savedId], !existing);
      const after = await show(tx, savedId, ctx.auth.scope);
      await recordActivity(
        tx,
        ctx.auth,
        {
          action: `${singular.replace(/ /g, "_")}.${existing ? "update" : "create"}`,
          subjectType: singular,
          subjectId: savedId,
          before,
          after,
        },
        ctx.now,
      );
      return { ...after, ...ctx.once };
    });

  const remove = (caller: Caller | Context<AppEnv>, ids: number[], bulk: boolean) =>
    callerOf(caller).services.db.transaction((tx) => removeIn(callerOf(caller), tx, ids, bulk));

  /**
   * What deleting each record alone would do, checked by the delete itself and rolled back: the refusal (409 in
   * use, 403 read-only or reaching beyond the caller's scope, 404) or the note of what it detaches. For a page
   * that confirms a bulk delete record by record; the bulk delete itself stays all or nothing.
   */
  const previewRemove = async (
    caller: Caller | Context<AppEnv>,
    ids: number[],
  ): Promise<Map<number, { refusal: string } | { note: string }>> => {
    const c = callerOf(caller);
    const out = new Map<number, { refusal: string } | { note: string }>();
    for (const id of new Set(ids)) {
      try {
        await c.services.db.transaction(async (tx) => {
          const { note } = await removeIn(c, tx, [id], false);
          throw new DryRun(note.replace(/^; /, ""));
        });
      } catch (err) {
        if (err instanceof DryRun) out.set(id, { note: err.message });
        else if (err instanceof ApiError && err.status < 500) out.set(id, { refusal: err.message });
        else throw err;
      }
    }
    return out;
  };

  const removeIn = async (c: Caller, tx: DbOrTx, ids: number[], bulk: boolean) => {
    const ctx = writeCtx(c, tx, "delete");
    const unique = [...new Set(ids)];
    const rows = await fetchRows(tx, unique, ctx.auth.scope);
    unique.forEach((id, i) => {
      if (rows.has(id)) return;
      if (!bulk) throw ApiError.notFound(`${capitalise(singular)} ${id}`);
      ctx.bag.add(`ids.${i}`, `ids.${i} ${id} is not an existing ${singular}`);
    });
    ctx.bag.throwIfAny();
    for (const row of rows.values()) {
      const reason = def.readOnlyReason?.(row);
      if (reason) throw new ApiError(403, reason);
    }
    await refuseIfReachingBeyondScope(ctx, unique);
    const before = await def.serialize(tx, [...rows.values()], ctx.auth.scope);
    const detached = await def.beforeDelete?.([...rows.values()], ctx);
    await tx.delete(def.table).where(inArray(def.table.id, unique));
    for (const b of before) {
      await recordActivity(
        tx,
        ctx.auth,
        {
          action: `${singular.replace(/ /g, "_")}.delete`,
          subjectType: singular,
          subjectId: b.id,
          before: b,
          after: null,
        },
        ctx.now,
      );
    }
    return { count: unique.length, note: detached ? `; ${detached}` : "" };
  };

  // The route objects carry precise per-route types that a generic helper cannot name; the handlers below
  // rely only on validated input, so they are registered through a loosely typed view of the app.
  function register(app: OpenAPIHono<AppEnv>): void {
    const api = app as unknown as {
      openapi(route: unknown, handler: (c: Context<AppEnv> & { req: { valid(t: string): any } }) => unknown): void;
    };
    api.openapi(routes.list, async (c) => {
      const q = parseListQuery(c, def.listSpec);
      const { total, rows } = await list(c.var.services.db, c.var.auth.scope, q);
      return c.json(listEnvelope(c, q, total, rows), 200);
    });
    api.openapi(routes.bulkDelete, async (c) => {
      const { count, note } = await remove(c, c.req.valid("json").ids, true);
      return c.json({ message: `Deleted ${count} ${count === 1 ? singular : plural}${note}` }, 200);
    });
    api.openapi(routes.show, async (c) =>
      c.json({ data: await show(c.var.services.db, c.req.valid("param").id, c.var.auth.scope) }, 200),
    );
    api.openapi(routes.create, async (c) => {
      const data = await save(c, c.req.valid("json"), null, "create");
      c.header("Location", new URL(`${c.req.path}/${data.id}`, c.req.url).toString());
      return c.json({ data }, 201);
    });
    api.openapi(routes.replace, async (c) =>
      c.json({ data: await save(c, c.req.valid("json"), c.req.valid("param").id, "replace") }, 200),
    );
    api.openapi(routes.update, async (c) =>
      c.json({ data: await save(c, c.req.valid("json"), c.req.valid("param").id, "patch") }, 200),
    );
    api.openapi(routes.delete, async (c) => {
      const id = c.req.valid("param").id;
      const { note } = await remove(c, [id], false);
      return c.json({ message: `${capitalise(singular)} ${id} deleted${note}` }, 200);
    });
  }

  // list, show, save and remove serve the web pages, which read and write through the same checks as the API
  // (input validates a body first).
  return { routes, register, list, show, save, remove, previewRemove, input: def.input, listSpec: def.listSpec };
}

/** `filter[name]` style exact match under the names' folding rule, on the name's stored key column. */
export const nameFilter = (keyColumn: SQLiteColumn, describe = "Exact name (any case)") => ({
  describe,
  build: (values: string[]): SQL => inArray(keyColumn, values.map(nameKey)),
});

export type { Db };

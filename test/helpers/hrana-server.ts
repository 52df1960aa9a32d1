import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import Database from "libsql";

/**
 * A libSQL server for tests, as small as it can be: the Hrana protocol over HTTP, version 2 (JSON pipelines, what
 * `@libsql/client`'s http client speaks by default), on an SQLite file through the local `libsql` package. No
 * real server (sqld) installs from the registries this project is built against.
 *
 * Each stream (baton) is a connection of its own; a request without a baton opens one. Connections have no busy
 * timeout: a write that meets another stream's lock answers SQLITE_BUSY, as a contended server does, instead of
 * blocking this event loop. `busy(true)` makes every statement answer SQLITE_BUSY, to stand for a contended
 * server; `dropNext(n)` drops the next n pipeline requests' connections unanswered, to stand for a dropped link.
 */
export type HranaServer = {
  url: string;
  requests: number;
  busy(on: boolean): void;
  dropNext(n: number): void;
  close(): Promise<void>;
};

type Value =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };
type Stmt = {
  sql?: string;
  sql_id?: number;
  args?: Value[];
  named_args?: { name: string; value: Value }[];
  want_rows?: boolean;
};
type Cond =
  | { type: "ok" | "error"; step: number }
  | { type: "not"; cond: Cond }
  | { type: "and" | "or"; conds: Cond[] }
  | { type: "is_autocommit" };
type StreamRequest =
  | { type: "close" | "get_autocommit" }
  | { type: "execute"; stmt: Stmt }
  | { type: "batch"; batch: { steps: { condition?: Cond | null; stmt: Stmt }[] } }
  | { type: "sequence"; sql?: string; sql_id?: number }
  | { type: "store_sql"; sql_id: number; sql: string }
  | { type: "close_sql"; sql_id: number };

class HranaError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const fromValue = (v: Value): unknown => {
  switch (v.type) {
    case "null":
      return null;
    case "integer":
      return BigInt(v.value);
    case "float":
      return v.value;
    case "text":
      return v.value;
    case "blob":
      return Buffer.from(v.base64, "base64");
  }
};

const toValue = (v: unknown): Value => {
  if (v === null || v === undefined) return { type: "null" };
  if (typeof v === "bigint") return { type: "integer", value: v.toString() };
  if (typeof v === "number")
    return Number.isInteger(v) ? { type: "integer", value: String(v) } : { type: "float", value: v };
  if (typeof v === "string") return { type: "text", value: v };
  if (v instanceof Uint8Array) return { type: "blob", base64: Buffer.from(v).toString("base64") };
  return { type: "text", value: String(v) };
};

export async function startHranaServer(file: string): Promise<HranaServer> {
  const streams = new Map<string, { db: Database.Database; sqls: Map<number, string> }>();
  let busy = false;
  let drop = 0;
  let requests = 0;

  const sqlOf = (stream: { sqls: Map<number, string> }, s: { sql?: string; sql_id?: number }) => {
    const sql = s.sql ?? (s.sql_id !== undefined ? stream.sqls.get(s.sql_id) : undefined);
    if (sql === undefined) throw new HranaError(`unknown sql_id ${s.sql_id}`, "SQL_NOT_FOUND");
    return sql;
  };

  function execute(stream: { db: Database.Database; sqls: Map<number, string> }, stmt: Stmt) {
    if (busy) throw new HranaError("database is locked", "SQLITE_BUSY");
    const prepared = stream.db.prepare(sqlOf(stream, stmt));
    const args = stmt.named_args?.length
      ? Object.fromEntries(stmt.named_args.map((a) => [a.name.replace(/^[:@$]/, ""), fromValue(a.value)]))
      : (stmt.args ?? []).map(fromValue);
    if (prepared.reader) {
      const rows = (prepared.raw(true).safeIntegers(true).all(args) as unknown[][]).map((row) => row.map(toValue));
      const cols = prepared
        .columns()
        .map((c: { name: string; type: string | null }) => ({ name: c.name, decltype: c.type }));
      return { cols, rows: stmt.want_rows === false ? [] : rows, affected_row_count: 0, last_insert_rowid: null };
    }
    const info = prepared.run(args) as { changes: number; lastInsertRowid: number | bigint };
    return { cols: [], rows: [], affected_row_count: info.changes, last_insert_rowid: String(info.lastInsertRowid) };
  }

  function evaluate(cond: Cond, ok: boolean[], failed: boolean[], db: Database.Database): boolean {
    switch (cond.type) {
      case "ok":
        return ok[cond.step] === true;
      case "error":
        return failed[cond.step] === true;
      case "not":
        return !evaluate(cond.cond, ok, failed, db);
      case "and":
        return cond.conds.every((c) => evaluate(c, ok, failed, db));
      case "or":
        return cond.conds.some((c) => evaluate(c, ok, failed, db));
      case "is_autocommit":
        return !db.inTransaction;
    }
  }

  const errorOf = (err: unknown) => ({
    message: err instanceof Error ? err.message : String(err),
    code: String((err as { code?: unknown }).code ?? "UNKNOWN"),
  });

  function handle(stream: { db: Database.Database; sqls: Map<number, string> }, request: StreamRequest): unknown {
    switch (request.type) {
      case "close":
        return { type: "close" };
      case "get_autocommit":
        return { type: "get_autocommit", is_autocommit: !stream.db.inTransaction };
      case "execute":
        return { type: "execute", result: execute(stream, request.stmt) };
      case "sequence": {
        if (busy) throw new HranaError("database is locked", "SQLITE_BUSY");
        stream.db.exec(sqlOf(stream, request));
        return { type: "sequence" };
      }
      case "store_sql":
        stream.sqls.set(request.sql_id, request.sql);
        return { type: "store_sql" };
      case "close_sql":
        stream.sqls.delete(request.sql_id);
        return { type: "close_sql" };
      case "batch": {
        const ok: boolean[] = [];
        const failed: boolean[] = [];
        const stepResults: unknown[] = [];
        const stepErrors: unknown[] = [];
        request.batch.steps.forEach((step, i) => {
          if (step.condition && !evaluate(step.condition, ok, failed, stream.db)) {
            stepResults.push(null);
            stepErrors.push(null);
            return;
          }
          try {
            stepResults.push(execute(stream, step.stmt));
            stepErrors.push(null);
            ok[i] = true;
          } catch (err) {
            stepResults.push(null);
            stepErrors.push(errorOf(err));
            failed[i] = true;
          }
        });
        return { type: "batch", result: { step_results: stepResults, step_errors: stepErrors } };
      }
    }
  }

  const server: Server = createServer((req, res) => {
    let body = "";
    req
      .setEncoding("utf8")
      .on("data", (d: string) => (body += d))
      .on("end", () => {
        if (req.method === "GET" && /^\/v2\/?$/.test(req.url ?? "")) return void res.writeHead(200).end();
        if (req.method !== "POST" || req.url !== "/v2/pipeline") return void res.writeHead(404).end();
        requests++;
        if (drop > 0) {
          drop--;
          return void req.socket.destroy();
        }
        const { baton, requests: list } = JSON.parse(body) as { baton: string | null; requests: StreamRequest[] };
        let id = baton ?? null;
        if (id !== null && !streams.has(id))
          return void res
            .writeHead(400, { "content-type": "application/json" })
            .end(JSON.stringify({ message: "unknown baton" }));
        if (id === null) {
          id = randomUUID();
          streams.set(id, { db: new Database(file, { timeout: 0 }), sqls: new Map() });
        }
        const stream = streams.get(id)!;
        const results = list.map((request) => {
          try {
            return { type: "ok", response: handle(stream, request) };
          } catch (err) {
            return { type: "error", error: errorOf(err) };
          }
        });
        const closed = list.some((r) => r.type === "close");
        if (closed) {
          stream.db.close();
          streams.delete(id);
        }
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ baton: closed ? null : id, base_url: null, results }));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    busy: (on) => void (busy = on),
    dropNext: (n) => void (drop = n),
    close: () =>
      new Promise((resolve) => {
        for (const { db } of streams.values()) db.close();
        streams.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

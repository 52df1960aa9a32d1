import Database from "libsql";

/**
 * Keeps each SQLite connection's recent statements prepared. @libsql/client's local driver prepares every
 * statement it runs afresh and throws it away: in bench:collect that preparing was 6% of the collector's event
 * loop (about 1.1 ms a download, for statements that differ only in their arguments), and with statements kept
 * the collector spent 2-2.5 ms less CPU per download. The client exposes no statement of its own to keep, so
 * this wraps the `prepare` of libsql's Database, which the client (and nothing else here) calls.
 *
 * Reusing a statement is sound because the client runs each one to its end synchronously before it returns (no
 * statement is ever in use twice at once) and sets the same modes on it before every use; SQLite re-prepares a
 * kept statement itself when the schema changes. Except for one thing: the result columns a kept statement
 * reports are the old ones until it runs again, and the client reads them before running it. So a statement
 * whose columns depend on the schema (any with `*`, as `select *` has) is never kept; drizzle names every column.
 */

/** Statements kept per connection: the collector and the API run a few dozen distinct ones over and over. */
export const STATEMENTS_PER_CONNECTION = 256;

type Connection = Database.Database;
type Statement = ReturnType<Connection["prepare"]>;

const kept = new WeakMap<Connection, Map<string, Statement>>();
let installed = false;

/** Installs the cache for every connection the process opens from now on (once; later calls do nothing). */
export function keepPreparedStatements(): void {
  if (installed) return;
  installed = true;
  const { prepare, close } = Database.prototype;
  Database.prototype.prepare = function (this: Connection, sql: string) {
    if (sql.includes("*")) return prepare.call(this, sql);
    let statements = kept.get(this);
    if (!statements) kept.set(this, (statements = new Map()));
    let statement = statements.get(sql);
    if (statement) statements.delete(sql);
    else statement = rememberShape(prepare.call(this, sql));
    // A Map iterates in insertion order: re-inserting on use makes the first key the least recently used.
    statements.set(sql, statement);
    if (statements.size > STATEMENTS_PER_CONNECTION) statements.delete(statements.keys().next().value!);
    return statement;
  } as typeof prepare;
  Database.prototype.close = function (this: Connection) {
    kept.delete(this);
    return close.call(this);
  };
}

/**
 * The client asks every statement, before each run, for its columns and whether it returns rows (raw() throws
 * when it does not): both native calls, the throw the dearer, and 4% of the collector's event loop. A kept
 * statement answers both the same every time (its columns are named in its SQL), so it remembers them.
 */
function rememberShape(statement: Statement): Statement {
  const { columns, raw } = statement;
  let named: ReturnType<Statement["columns"]> | undefined;
  let refusal: unknown;
  statement.columns = () => (named ??= columns.call(statement));
  statement.raw = (toggle?: boolean) => {
    if (refusal) throw refusal;
    try {
      return raw.call(statement, toggle);
    } catch (err) {
      refusal = err;
      throw err;
    }
  };
  return statement;
}

/** How many statements a connection keeps now (for tests). */
export const keptStatements = (db: Connection): number => kept.get(db)?.size ?? 0;

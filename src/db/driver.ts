import type { Client, Config } from "@libsql/client";

/**
 * Opens a libSQL client, loading the driver it needs on first use: the native one (SQLite inside this process,
 * a Node addon) for `file:` URLs, the Web-standard one (`@libsql/client/web`: fetch and WebSocket) for a libSQL
 * server. A process that only talks to a server therefore never loads the addon: under Deno the API then needs
 * no --allow-ffi, and it can run where native code cannot (Deno Deploy and similar). Node 20 has no global
 * WebSocket, so there ws:// and wss:// keep the native package's client (which brings its own).
 */
export async function openClient(config: Config): Promise<Client> {
  const native = config.url.startsWith("file:") || (/^wss?:/.test(config.url) && typeof WebSocket === "undefined");
  const { createClient } = native ? await import("@libsql/client") : await import("@libsql/client/web");
  return createClient(config);
}

import type { Server } from "node:http";
import type { Socket } from "node:net";
import { createAdaptorServer } from "@hono/node-server";

/** How long a closing connection waits for more of what the client sends, and how much of it it reads at most. */
export const LINGER = { idleMs: 2_000, bytes: 64 * 1024 * 1024 } as const;

type NodeSocket = Socket & { _handle?: { reading?: boolean; readStart?(): number }; parser?: { unconsume?(): void } };

/**
 * Closes a connection the server ends (`Connection: close`: a 413 refuses a body before reading it) without
 * losing its answer: the answer is sent and the sending side shut (FIN), then whatever the client still sends is
 * read and dropped until it closes its side, sends nothing for LINGER.idleMs, or sends LINGER.bytes. Closing at
 * once, with the client's bytes unread, makes the kernel answer them with a reset, and a client still writing
 * its body (any client sending more than a few MiB) meets the reset before it reads the 413.
 */
function lingerBeforeClose(socket: NodeSocket): void {
  socket.destroySoon = function destroySoon(this: NodeSocket) {
    if (this.destroyed) return;
    if (this.writable) this.end();
    // The HTTP parser no longer reads for the refused request: the socket's bytes come here instead.
    this.parser?.unconsume?.();
    this.removeAllListeners("data");
    let seen = 0;
    let timer: NodeJS.Timeout;
    const close = () => {
      clearTimeout(timer);
      this.destroy();
    };
    const wait = () => {
      clearTimeout(timer);
      timer = setTimeout(close, LINGER.idleMs);
      timer.unref();
    };
    wait();
    this.on("data", (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > LINGER.bytes) close();
      else wait();
    });
    this.once("end", close);
    this.once("close", () => clearTimeout(timer));
    this.resume();
    // The parser stopped the socket's reads (readStop) when the body found no reader: start them again.
    const handle = this._handle;
    if (handle && !handle.reading) {
      handle.reading = true;
      handle.readStart?.();
    }
  };
}

/** A `.` or `..` path segment, plain or percent-encoded (`%2e%2e`, `.%2E`): the URL parser would resolve it. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:\/|$|\?|#)/i;

/**
 * The path as the client sent it holds a dot segment: answered 404 here, before the URL is parsed, since parsing
 * resolves `/devices/%2e%2e/tags` to `/tags` and the request would reach a route its path does not name.
 */
function dotSegmentAnswer(env: unknown): Response | undefined {
  const raw = (env as { incoming?: { url?: string } } | undefined)?.incoming?.url ?? "";
  const path = raw.split("?")[0]!;
  if (!DOT_SEGMENT.test(path)) return undefined;
  return new Response(
    JSON.stringify({
      success: false,
      message: `Not found: ${path}: a path may not hold . or .. segments, plain or percent-encoded`,
    }),
    {
      status: 404,
      headers: { "content-type": "application/json", "x-content-type-options": "nosniff" },
    },
  );
}

/**
 * The API's HTTP server, as the Node launcher runs it: hono's adaptor, closing connections without losing
 * answers, and refusing dot segments before the URL parser resolves them.
 */
export function createHttpServer(fetch: (request: Request, env: unknown) => Response | Promise<Response>): Server {
  const server = createAdaptorServer({
    fetch: (request, env) => dotSegmentAnswer(env) ?? fetch(request, env),
  }) as Server;
  server.on("connection", lingerBeforeClose);
  return server;
}

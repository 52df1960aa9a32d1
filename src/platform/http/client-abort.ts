import type { Context } from "hono";

/**
 * Whether a request failed because its client went away before sending the whole body: Node's "aborted"
 * (ECONNRESET) while the body was read, or the abort of the request's signal. Nothing went wrong on this side, and no
 * one is left to answer.
 */
export function isClientAbort(err: unknown, c: Context): boolean {
  // A request whose client left fails through its signal: only that failure is the client's, not a bug met meanwhile.
  const signal = c.req.raw.signal;
  if (signal?.aborted && (err === signal.reason || (err as Error | undefined)?.name === "AbortError")) return true;
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE" || message === "aborted") return true;
  }
  return false;
}

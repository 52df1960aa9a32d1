import type { Context, MiddlewareHandler, Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "./errors.ts";

/** What a route takes when it says nothing: ample for any one record, and far below what would strain memory. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** "1 MiB", "16 MiB", "512 KiB": how a limit reads in a message and in the API description. */
export function sizeInWords(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / 1024 / 1024) * 100) / 100} MiB`;
  return `${Math.round((bytes / 1024) * 100) / 100} KiB`;
}

/**
 * How deeply a JSON body may nest objects and arrays. No record this API takes nests past a handful of levels;
 * a body nested thousands deep (a few KB) would exhaust the stack of whatever walks it after parsing.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The first nesting depth past `max` in a JSON text, or 0 when it stays within: one pass over the characters,
 * skipping strings, before anything parses it. A malformed text is left for the parser to refuse.
 */
export function jsonDepthPast(text: string, max: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return 0;
}

const JSON_TYPE = /^application\/([\w.-]+\+)?json$/i;
const isJson = (contentType: string | undefined) => JSON_TYPE.test((contentType ?? "").split(";")[0]!.trim());

/** The route has a body; this is what the gate in front of its parser needs to know. */
export type BodyRule = {
  /** Bytes; a larger body is a 413 whether it came with Content-Length or in chunks. */
  limit: number;
  /** The route declares a JSON body, so its bytes must be UTF-8. */
  json: boolean;
  /** The body may be left out: then an empty one (with or without a Content-Type) is no body. */
  optional: boolean;
};

/**
 * Stands in front of a route's body parser. A body over the route's limit is refused with a 413 before any
 * of it is parsed (hono's bodyLimit: it trusts Content-Length and counts a chunked body as it arrives, holding
 * at most the limit). A JSON body that is not UTF-8 is a 400: decoding would otherwise replace the bad bytes
 * with U+FFFD and store them; one nested past MAX_JSON_DEPTH is a 400 too, before it is parsed. An empty body where the body is optional is no body at all, so clients that
 * always send Content-Type: application/json get what they asked for.
 */
export function bodyGate(rule: BodyRule): MiddlewareHandler {
  const limit = bodyLimit({
    maxSize: rule.limit,
    onError: () => {
      // The rest of the body is never read: the connection ends after this answer, and says so.
      throw new ApiError(
        413,
        `The request body is larger than ${sizeInWords(rule.limit)}, the most this route takes: send a smaller body (for bulk operations, fewer items per request)`,
        undefined,
        { Connection: "close" },
      );
    },
  });
  const inspect = async (c: Context, next: Next): Promise<void> => {
    if (!c.req.raw.body || !(rule.json || rule.optional)) return next();
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    if (rule.optional && bytes.every((b) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09)) {
      const headers = new Headers(c.req.raw.headers);
      headers.delete("content-type");
      headers.delete("content-length");
      c.req.raw = new Request(c.req.raw.url, { method: c.req.raw.method, headers });
      c.req.bodyCache = {};
      return next();
    }
    if (rule.json && isJson(c.req.header("content-type"))) {
      let text: string;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        throw new ApiError(400, "The request body is not valid UTF-8: send the JSON encoded as UTF-8");
      }
      if (jsonDepthPast(text, MAX_JSON_DEPTH)) {
        throw new ApiError(
          400,
          `The request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep: send a flatter body`,
        );
      }
      // The JSON validator reads this text instead of decoding the bytes again (leniently).
      // (hono types the cache by the values it resolves to; it holds their promises.)
      (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
    }
    return next();
  };
  return async (c, next) => {
    // bodyLimit answers only by throwing (onError above), so it never returns a response of its own.
    await limit(c, () => inspect(c, next));
  };
}

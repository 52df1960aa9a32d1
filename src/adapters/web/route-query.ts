import type { z } from "zod";
import { zodToApiError } from "../../platform/http/validation.ts";

/**
 * A page's query checked by the query schema of the API route it mirrors: the same options, the same limits and
 * the same 422 wording, so a page takes exactly what the API takes.
 */
export function routeQuery<S extends z.ZodType>(
  route: { request: { query: S } },
  input: Record<string, string | string[]>,
): z.infer<S> {
  const result = route.request.query.safeParse(input);
  if (!result.success) throw zodToApiError(result.error);
  return result.data;
}

import type { z } from "zod";
import { ApiError, FieldErrorBag } from "./errors.ts";

/** zod's own wording starts with these; a schema's custom message is used as written. */
const GENERIC = /^(Invalid|Too small|Too big|Unrecognized|Expected)/;

function describe(issue: z.core.$ZodIssue): string {
  if (!GENERIC.test(issue.message)) return issue.message;
  switch (issue.code) {
    case "invalid_type":
      return /received undefined/.test(issue.message) ? "is required" : `must be of type ${issue.expected}`;
    case "too_small": {
      const n = Number(issue.minimum);
      if (issue.origin === "string") return `must be at least ${n} character${n === 1 ? "" : "s"}`;
      if (issue.origin === "array") return `must have at least ${n} item${n === 1 ? "" : "s"}`;
      return `must be at least ${n}`;
    }
    case "too_big": {
      const n = Number(issue.maximum);
      if (issue.origin === "string") return `must be at most ${n} characters`;
      if (issue.origin === "array") return `must have at most ${n} items`;
      return `must be at most ${n}`;
    }
    case "invalid_value":
      return `must be one of: ${issue.values.map(String).join(", ")}`;
    case "invalid_key":
      return issue.issues[0] ? `key ${describe(issue.issues[0])}` : "has an invalid key";
    case "unrecognized_keys":
      return `has unknown field${issue.keys.length === 1 ? "" : "s"}: ${issue.keys.join(", ")}`;
    default:
      return "is invalid";
  }
}

export function fieldName(path: readonly PropertyKey[], prefix = ""): string {
  const name = path.map(String).join(".");
  return prefix && name ? `${prefix}.${name}` : prefix || name || "body";
}

/** Turns a zod failure into the 422 body: every key is the field path, every message starts with it. */
export function zodToApiError(error: z.ZodError, prefix = ""): ApiError {
  const bag = new FieldErrorBag();
  for (const issue of error.issues) {
    const field = fieldName(issue.path, prefix);
    bag.add(field, `${field} ${describe(issue)}`);
  }
  return ApiError.validation(bag.errors);
}

/** The OpenAPIHono defaultHook: a request that fails its schema never reaches the handler. */
export const validationHook = (result: { success: boolean; error?: unknown }) => {
  if (!result.success) throw zodToApiError(result.error as z.ZodError);
};

import { ApiError } from "./errors.ts";

/** The API field each stored name key stands for, by the `table.column` SQLite names in the failure. */
const FIELD_OF_KEY: Record<string, string> = {
  "credentials.name_key": "cred_name",
  "devices.name_key": "device_name",
  "tasks.name_key": "task_name",
  "users.username_key": "username",
  "users.email_key": "email",
};

/** `table.column` of each column a UNIQUE constraint failure names, also as the cause of another error (drizzle wraps the driver's). */
export function uniqueViolationColumns(err: unknown): string[] | undefined {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const match = /UNIQUE constraint failed: (.+)$/m.exec(String((e as { message?: unknown }).message ?? ""));
    if (match) return match[1]!.split(",").map((c) => c.trim());
  }
  return undefined;
}

/**
 * Every write checks uniqueness before it inserts, so a UNIQUE failure means another process wrote the same
 * name between this request's check and its insert. It is answered like the check would have answered: 422
 * naming the field. A unique index that is not a name's key answers 409: the record changed under the request.
 */
export function uniqueViolationError(err: unknown): ApiError | undefined {
  const columns = uniqueViolationColumns(err);
  if (!columns) return undefined;
  const keys = columns.filter((c) => c.endsWith("_key"));
  if (!keys.length)
    return ApiError.conflict(
      `Another request wrote the same ${columns.join(", ")} at the same moment; nothing was changed: read the record again and retry`,
    );
  const fields = keys.map((c) => FIELD_OF_KEY[c] ?? c.slice(c.indexOf(".") + 1).replace(/_key$/, ""));
  return ApiError.validation(
    Object.fromEntries(fields.map((f) => [f, [`${f} is already taken (by a record written at the same moment)`]])),
  );
}

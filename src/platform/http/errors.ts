import { DISK_FULL_REASON } from "../../kernel/error-reason.ts";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export type FieldErrors = Record<string, string[]>;

/**
 * The one error type handlers throw. `onError` turns it into `{"message": ..., "errors"?: ...}`; nothing else
 * shapes an error body.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly errors?: FieldErrors,
    readonly headers?: Record<string, string>,
    /** More fields of the answer beside `message` (a 403's `required_ability`). */
    readonly fields?: Record<string, string>,
  ) {
    super(message);
  }

  static unauthorized = (message = "Unauthorized") => new ApiError(401, message);
  /** The message stays rConfig's; the ability the route needs is named beside it. */
  static forbidden = (ability: string) =>
    new ApiError(403, "Invalid ability provided", undefined, undefined, { required_ability: ability });
  static notFound = (what: string) => new ApiError(404, `${what} not found`);
  static conflict = (message: string) => new ApiError(409, message);
  /** 507 Insufficient Storage: the disk (or the database's size cap) refused a write; isDiskFull tells one. */
  static diskFull = (what = "The request") => new ApiError(507, `${what} failed: ${DISK_FULL_REASON}`);

  /** 422 in the shape Laravel clients parse: the first problem, how many more, and every problem by field. */
  static validation(errors: FieldErrors): ApiError {
    const all = Object.values(errors).flat();
    const more = all.length - 1;
    const message = all[0] + (more > 0 ? ` (and ${more} more error${more === 1 ? "" : "s"})` : "");
    return new ApiError(422, message, errors);
  }
}

/** Collects field problems across checks so a client learns every mistake in one round trip. */
export class FieldErrorBag {
  readonly errors: FieldErrors = {};
  add(field: string, problem: string): void {
    // A field a client named itself may be "constructor" or "__proto__": only an own property is this field's list.
    if (!Object.hasOwn(this.errors, field))
      Object.defineProperty(this.errors, field, { value: [], enumerable: true, writable: true, configurable: true });
    this.errors[field]!.push(problem);
  }
  get empty(): boolean {
    return Object.keys(this.errors).length === 0;
  }
  throwIfAny(): void {
    if (!this.empty) throw ApiError.validation(this.errors);
  }
}

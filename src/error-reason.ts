/**
 * Why something failed, for a message people read. A failed query's own message carries its SQL and its
 * parameters, which can be a whole configuration text: its driver's reason (the cause) is given instead.
 */
export const failureReason = (err: unknown): string =>
  err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);

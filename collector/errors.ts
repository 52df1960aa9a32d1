import { failureReason } from "../src/kernel/error-reason.ts";

/** For the collector's log lines: the error's kind and its reason, never a failed query's parameters. */
export const describeError = (err: unknown): string =>
  err instanceof Error ? `${err.name}: ${failureReason(err)}` : String(err);

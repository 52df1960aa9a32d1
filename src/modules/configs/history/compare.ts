import type { Db } from "../../../db/client.ts";
import type { DeviceScope } from "../../../platform/auth/scope.ts";
import { ApiError } from "../../../platform/http/errors.ts";
import { diffTexts, formatUnified, type TextDiff } from "./config-diff.ts";
import { loadCompareExclusions } from "./exclusions.ts";
import type { ConfigOut } from "../schemas.ts";
import { configText, getConfig } from "../service.ts";
import { configFileName } from "../storage/text.ts";

export type CompareRequest = {
  from: number;
  to: number;
  context: number;
  ignoreWhitespace: boolean;
  ignoreCase: boolean;
  exclusions: boolean;
};

export type Comparison = { from: ConfigOut; to: ConfigOut; diff: TextDiff; request: CompareRequest };

/** Diffs two versions of the same command (of one device or two), both in the caller's scope. */
export async function compareConfigs(db: Db, scope: DeviceScope, req: CompareRequest): Promise<Comparison> {
  const [from, to] = await Promise.all([getConfig(db, scope, req.from), getConfig(db, scope, req.to)]);
  if (from.row.command !== to.row.command) {
    throw ApiError.validation({
      to: [
        `to is a '${to.row.command}' version and from a '${from.row.command}' one: a diff compares versions of the same command`,
      ],
    });
  }
  const [oldText, newText, exclusions] = await Promise.all([
    configText(db, from.row),
    configText(db, to.row),
    req.exclusions ? loadCompareExclusions(db) : undefined,
  ]);
  const diff = diffTexts(oldText, newText, {
    context: req.context,
    ignoreWhitespace: req.ignoreWhitespace,
    ignoreCase: req.ignoreCase,
    exclude: exclusions?.matcher(from.row.command),
  });
  return { from: from.out, to: to.out, diff, request: req };
}

const side = (c: ConfigOut) => ({
  id: c.id,
  device_id: c.device_id,
  device_name: c.device_name,
  command: c.command,
  version: c.version,
});

export function comparisonJson(c: Comparison) {
  return {
    from: side(c.from),
    to: side(c.to),
    identical: c.diff.hunks.length === 0,
    lines_added: c.diff.added,
    lines_removed: c.diff.removed,
    options: {
      context: c.request.context,
      ignore_whitespace: c.request.ignoreWhitespace,
      ignore_case: c.request.ignoreCase,
      exclusions: c.request.exclusions,
    },
    hunks: c.diff.hunks,
  };
}

/** `diff -u` text whose file names are the versions' download names, each with the time it was first seen. */
export function comparisonUnified(c: Comparison): string {
  const label = (v: ConfigOut) => `${configFileName(v.device_name, v.command, v.version)}\t${v.first_seen_at}`;
  return formatUnified(c.diff, label(c.from), label(c.to));
}

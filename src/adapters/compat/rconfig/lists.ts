/**
 * List queries as rConfig's controllers read them (spatie/laravel-query-builder: `filter[q]`, `filter[tag]` ...,
 * `sort=tagname`): rewritten into netkeep's own filter, search and sort names before validation, so a list
 * answers what rConfig's would and netkeep's unknown-name 422 still catches anything else.
 */
import { DEVICE_STATUSES } from "../../../db/schema/index.ts";
import { FieldErrorBag } from "../../../platform/http/errors.ts";
import { replaceQuery, type CompatHook } from "./hook.ts";

export type ListRewrite = {
  /** rConfig's filter name -> netkeep's (`filter[tag]` -> `filter[device_tag_id]`); `q` is netkeep's search. */
  filters?: Record<string, string>;
  /** rConfig's sort name -> netkeep's. */
  sorts?: Record<string, string>;
  /**
   * rConfig's filter values -> netkeep's query parameters, per rConfig filter name: a string is a problem (422).
   * Values that are netkeep's own already pass through (netkeep's `filter[status]=up` shares rConfig's name).
   */
  values?: Record<string, (values: string[]) => Record<string, string> | string>;
};

/** rConfig's free-text filter (its FilterMultipleFields over a few columns): netkeep's search. */
const SEARCH = "q";

export function rewriteListQuery(params: URLSearchParams, rewrite: ListRewrite): URLSearchParams {
  const out = new URLSearchParams(params);
  const bag = new FieldErrorBag();
  const q = out.get(`filter[${SEARCH}]`);
  if (q !== null) {
    if (out.has("search"))
      bag.add(`filter[${SEARCH}]`, `filter[${SEARCH}] is rConfig's name for search: send one of them, not both`);
    else out.set("search", q);
    out.delete(`filter[${SEARCH}]`);
  }
  for (const [theirs, ours] of Object.entries(rewrite.filters ?? {})) {
    const value = out.get(`filter[${theirs}]`);
    if (value === null) continue;
    out.delete(`filter[${theirs}]`);
    const map = rewrite.values?.[theirs];
    const mapped = map
      ? map(
          value
            .split(",")
            .map((v) => v.trim())
            .filter(Boolean),
        )
      : { [`filter[${ours}]`]: value };
    if (typeof mapped === "string") {
      bag.add(`filter[${theirs}]`, mapped);
      continue;
    }
    for (const [key, v] of Object.entries(mapped)) {
      if (out.has(key))
        bag.add(`filter[${theirs}]`, `filter[${theirs}] is rConfig's name for ${key}: send one of them, not both`);
      else out.set(key, v);
    }
  }
  const sort = out.get("sort");
  if (sort !== null && rewrite.sorts) {
    out.set(
      "sort",
      sort
        .split(",")
        .map((part) => {
          const descending = part.trim().startsWith("-");
          const name = part.trim().replace(/^-/, "");
          return `${descending ? "-" : ""}${rewrite.sorts![name] ?? name}`;
        })
        .join(","),
    );
  }
  bag.throwIfAny();
  return out;
}

/** A hook's request step that rewrites the list query (and then runs the hook's own request step, if any). */
export function withListRewrite(hook: CompatHook, rewrite: ListRewrite, note: string): CompatHook {
  return {
    ...hook,
    request: async (c) => {
      const params = new URL(c.req.url).searchParams;
      const rewritten = rewriteListQuery(params, rewrite);
      if (rewritten.toString() !== params.toString()) replaceQuery(c, rewritten);
      if (hook.request) await hook.request(c);
    },
    note: [hook.note, note].filter(Boolean).join(" "),
  };
}

/**
 * rConfig's device status (DeviceController: enable sets 1 or 0 by ping, disable sets 100): 1 up, 0 unreachable,
 * 2 never checked, 100 disabled. netkeep keeps reachability and enabled apart, so 100 is `filter[enabled]=false`
 * and cannot be mixed with the others in one filter.
 */
const RCONFIG_STATUS: Record<string, (typeof DEVICE_STATUSES)[number]> = {
  "0": "unreachable",
  "1": "up",
  "2": "unknown",
};
export const rconfigDeviceStatus = (values: string[]): Record<string, string> | string => {
  if (values.length && values.every((v) => (DEVICE_STATUSES as readonly string[]).includes(v)))
    return { "filter[status]": values.join(",") };
  const bad = values.find((v) => v !== "100" && !(v in RCONFIG_STATUS));
  if (bad !== undefined || !values.length)
    return `filter[status] must be one of: ${DEVICE_STATUSES.join(", ")}, or rConfig's 0, 1, 2, 100`;
  if (values.includes("100")) {
    if (values.length > 1)
      return "filter[status]=100 (rConfig's disabled) cannot be combined with other statuses: netkeep keeps enabled apart from reachability; ask for each in turn";
    return { "filter[enabled]": "false" };
  }
  return { "filter[status]": values.map((v) => RCONFIG_STATUS[v]).join(","), "filter[enabled]": "true" };
};

import type { Context } from "hono";
import type { SQL } from "drizzle-orm";
import type { Ability } from "../../platform/auth/abilities.ts";
import type { DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import type { ListQuery, ListSpec } from "../../platform/http/list.ts";
import { categoriesResource } from "../../modules/categories/index.ts";
import { credentialsResource } from "../../modules/credentials/index.ts";
import { tagsResource } from "../../modules/tags/index.ts";
import { templatesResource } from "../../modules/templates/index.ts";
import { vendorsResource } from "../../modules/vendors/index.ts";
import { zonesResource } from "../../modules/zones/index.ts";
import type { WebEnv } from "./env.ts";

type Listable = {
  listSpec: ListSpec;
  list(db: DbOrTx, scope: DeviceScope, q: ListQuery): Promise<{ rows: ({ id: number } & Record<string, unknown>)[] }>;
};

/** Lists offered in a form's select: the first 500 records by name, as the API lists them. */
const LIMIT = 500;

/** [id, name] of the records a select offers; null when the role may not list them through the API. */
export async function choices(
  c: Context<WebEnv>,
  resource: Listable,
  ability: Ability,
  nameField: string,
): Promise<[number, string][] | null> {
  if (!c.var.auth.abilities.has(ability)) return null;
  return (await firstRows(c, resource, nameField)).map((r) => [r.id, String(r[nameField])]);
}

/** The first 500 records in the caller's scope, sorted by `sortField`, as the API's list shows them. */
export async function firstRows(c: Context<WebEnv>, resource: Listable, sortField: string) {
  const order = resource.listSpec.sorts[sortField] as SQL | undefined;
  const { rows } = await resource.list(c.var.services.db, c.var.auth.scope, {
    page: 1,
    perPage: LIMIT,
    where: undefined,
    orderBy: order ? [order] : [],
    fields: null,
  });
  return rows;
}

/**
 * What a device form offers: each list only to a role that may list it through the API (null otherwise, and
 * the form then keeps what the device has).
 */
export async function deviceChoices(c: Context<WebEnv>) {
  const [vendors, categories, templates, credentials, zones] = await Promise.all([
    choices(c, vendorsResource, "vendors.read", "name"),
    choices(c, categoriesResource, "categories.read", "name"),
    choices(c, templatesResource, "templates.read", "name"),
    choices(c, credentialsResource, "credentials.read", "cred_name"),
    choices(c, zonesResource, "system.read", "name"),
  ]);
  return { vendors, categories, templates, credentials, zones };
}

export type DeviceChoices = Awaited<ReturnType<typeof deviceChoices>>;

/** The tags and categories a form targeting devices offers (each to a role that may list it; null otherwise). */
export async function targetChoices(c: Context<WebEnv>) {
  const [tags, categories] = await Promise.all([
    choices(c, tagsResource, "tags.read", "name"),
    choices(c, categoriesResource, "categories.read", "name"),
  ]);
  return { tags, categories };
}

export type TargetChoices = Awaited<ReturnType<typeof targetChoices>>;

import type { Ability } from "../../platform/auth/abilities.ts";
import type { AuthContext } from "../../platform/http/env.ts";

export type MenuItem = {
  href: string;
  label: string;
  ability: Ability | null;
  wholeEstate?: boolean;
  adminOnly?: boolean;
};
/** A dropdown of the top menu (a `<details>`, so it opens without JavaScript). */
export type MenuGroup = { label: string; items: readonly MenuItem[] };
export type MenuEntry = MenuItem | MenuGroup;

export const isMenuGroup = (e: MenuEntry): e is MenuGroup => "items" in e;

/**
 * The top menu: each page with the ability its API route needs (null: every user's own page), grouped so that an
 * administrator's two dozen pages fit on one line of a phone: the fleet and its runs, the devices' configurations
 * (their history, search, policies, pushes), what devices are reached with, and administration. An item the role may not use is left out, and a group
 * left with none disappears, so nobody is shown a link that answers 403 (webhooks and discovery also need a role that
 * sees every device, as in the API).
 */
export const MENU: readonly MenuEntry[] = [
  {
    label: "Fleet",
    items: [
      { href: "/dashboard", label: "Dashboard", ability: "system.read" },
      { href: "/devices", label: "Devices", ability: "devices.read" },
      { href: "/discovery", label: "Discovery", ability: "devices.read", wholeEstate: true },
      { href: "/tasks", label: "Tasks", ability: "tasks.read" },
      { href: "/reports", label: "Reports", ability: "system.read" },
    ],
  },
  {
    label: "Configs",
    items: [
      { href: "/changes", label: "Changes", ability: "configs.read" },
      { href: "/search", label: "Search", ability: "configs.read" },
      { href: "/compare-exclusions", label: "Compare exclusions", ability: "configs.read" },
      { href: "/configs/retention", label: "Retention and export", ability: "configs.read" },
      { href: "/compliance", label: "Compliance", ability: "policycompliance.read" },
      { href: "/snippets", label: "Snippets", ability: "snippets.read" },
    ],
  },
  {
    label: "Inventory",
    items: [
      { href: "/credentials", label: "Credentials", ability: "credentials.read" },
      { href: "/templates", label: "Templates", ability: "templates.read" },
      { href: "/categories", label: "Command groups", ability: "categories.read" },
      { href: "/vendors", label: "Vendors", ability: "vendors.read" },
      { href: "/tags", label: "Tags", ability: "tags.read" },
      { href: "/device-profiles", label: "Device profiles", ability: "deviceprofiles.read" },
    ],
  },
  {
    label: "Admin",
    items: [
      { href: "/admin/users", label: "Users", ability: "users.read" },
      { href: "/activity", label: "Activity", ability: "users.read" },
      { href: "/settings", label: "Settings", ability: "system.read" },
      { href: "/system", label: "System", ability: "system.read" },
      { href: "/zones", label: "Zones", ability: "system.read" },
      { href: "/webhooks", label: "Webhooks", ability: "system.read", wholeEstate: true },
      { href: "/mail", label: "Mail", ability: "users.read" },
      { href: "/tokens", label: "API tokens", ability: null },
      { href: "/settings/restapi", label: "REST API Access", ability: "system.read", adminOnly: true },
    ],
  },
];

/** The entries this caller may open: items it may use, groups holding at least one. */
export function menuFor(auth: Pick<AuthContext, "abilities" | "scope"> | undefined, isAdmin: boolean): MenuEntry[] {
  if (!auth) return [];
  const allowed = (m: MenuItem) =>
    (m.ability === null || auth.abilities.has(m.ability)) &&
    (!m.wholeEstate || auth.scope.all) &&
    (!m.adminOnly || isAdmin);
  return MENU.flatMap((e): MenuEntry[] => {
    if (!isMenuGroup(e)) return allowed(e) ? [e] : [];
    const items = e.items.filter(allowed);
    return items.length ? [{ label: e.label, items }] : [];
  });
}

/** The item a path belongs to: the longest href that is the path or a folder above it (/settings/restapi, not /settings). */
export function currentHref(entries: readonly MenuEntry[], path: string): string | undefined {
  const hrefs = entries.flatMap((e) => (isMenuGroup(e) ? e.items : [e])).map((m) => m.href);
  return hrefs.filter((h) => path === h || path.startsWith(`${h}/`)).sort((a, b) => b.length - a.length)[0];
}

import type { Ability } from "../../platform/auth/abilities.ts";
import type { AuthContext } from "../../platform/http/env.ts";

type MenuItem = { href: string; label: string; ability: Ability | null; wholeEstate?: boolean; adminOnly?: boolean };

/**
 * The top menu: each page with the ability its API route needs (null: every user's own page). An item the role may not use is left out, so
 * nobody is shown a link that answers 403 (webhooks and discovery also need a role that sees every device, as in the API).
 */
export const MENU: readonly MenuItem[] = [
  { href: "/dashboard", label: "Dashboard", ability: "system.read" },
  { href: "/devices", label: "Devices", ability: "devices.read" },
  { href: "/discovery", label: "Discovery", ability: "devices.read", wholeEstate: true },
  { href: "/credentials", label: "Credentials", ability: "credentials.read" },
  { href: "/templates", label: "Templates", ability: "templates.read" },
  { href: "/categories", label: "Command groups", ability: "categories.read" },
  { href: "/vendors", label: "Vendors", ability: "vendors.read" },
  { href: "/tags", label: "Tags", ability: "tags.read" },
  { href: "/device-profiles", label: "Device profiles", ability: "deviceprofiles.read" },
  { href: "/changes", label: "Changes", ability: "configs.read" },
  { href: "/search", label: "Search", ability: "configs.read" },
  { href: "/tasks", label: "Tasks", ability: "tasks.read" },
  { href: "/compliance", label: "Compliance", ability: "policycompliance.read" },
  { href: "/snippets", label: "Snippets", ability: "snippets.read" },
  { href: "/webhooks", label: "Webhooks", ability: "system.read", wholeEstate: true },
  { href: "/mail", label: "Mail", ability: "users.read" },
  { href: "/reports", label: "Reports", ability: "system.read" },
  { href: "/admin/users", label: "Users", ability: "users.read" },
  { href: "/activity", label: "Activity", ability: "users.read" },
  { href: "/settings", label: "Settings", ability: "system.read" },
  { href: "/zones", label: "Zones", ability: "system.read" },
  { href: "/system", label: "System", ability: "system.read" },
  { href: "/tokens", label: "API tokens", ability: null },
  { href: "/settings/restapi", label: "REST API Access", ability: "system.read", adminOnly: true },
];

/** The items this caller may open. */
export function menuFor(auth: Pick<AuthContext, "abilities" | "scope"> | undefined, isAdmin: boolean): MenuItem[] {
  if (!auth) return [];
  return MENU.filter(
    (m) =>
      (m.ability === null || auth.abilities.has(m.ability)) &&
      (!m.wholeEstate || auth.scope.all) &&
      (!m.adminOnly || isAdmin),
  );
}

import { ABILITIES, type Ability } from "./abilities.ts";

/** The built-in role every ability belongs to (its holders are the administrators). */
export const ADMIN_ROLE = "admin";

export const BUILTIN_ROLES: { name: string; description: string; permissions: Ability[] }[] = [
  { name: "admin", description: "Everything", permissions: [...ABILITIES] },
  {
    name: "operator",
    description: "Everything but user management and system settings",
    permissions: ABILITIES.filter((a) => !a.startsWith("users.") && a !== "system.write"),
  },
  {
    name: "viewer",
    description: "Read-only access to everything",
    permissions: ABILITIES.filter((a) => a.endsWith(".read")),
  },
];

/** Every route declares exactly one of these; tokens and roles carry sets of them. */
export const RESOURCES = [
  "devices",
  "configs",
  "credentials",
  "templates",
  "categories",
  "commands",
  "vendors",
  "tags",
  "deviceprofiles",
  "tasks",
  "users",
  "snippets",
  "policycompliance",
  "system",
] as const;

export type Resource = (typeof RESOURCES)[number];
export type Ability = `${Resource}.${"read" | "write"}`;

export const ABILITIES: readonly Ability[] = RESOURCES.flatMap((r) => [`${r}.read`, `${r}.write`] as Ability[]);

const abilitySet = new Set<string>(ABILITIES);
export const isAbility = (value: string): value is Ability => abilitySet.has(value);

/** Splits "a,b , c" and reports the names that are not in the catalogue. */
export function parseAbilityList(text: string): { abilities: Ability[]; unknown: string[] } {
  const names = [
    ...new Set(
      text
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  return { abilities: names.filter(isAbility), unknown: names.filter((n) => !isAbility(n)) };
}

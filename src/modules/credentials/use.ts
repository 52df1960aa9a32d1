import type { Ability } from "../../platform/auth/abilities.ts";
import { reachesOnlyScope, type DeviceScope } from "../../platform/auth/scope.ts";
import type { DbOrTx } from "../../db/client.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { usingCredentials } from "./resource.ts";

/** Who attaches a set: a request's abilities and scope, or "all" for netkeep's own writes (the CLI, imports it runs). */
export type CredentialUser = { abilities: ReadonlySet<Ability> | "all"; scope: DeviceScope };

/** The ability a caller needs to use (attach) a credential set: see docs/users.md. */
export const CREDENTIAL_USE_ABILITY: Ability = "credentials.read";

/**
 * Attaching a credential set to a device sends its secrets to the device's address at the next download or push,
 * so using a set is an authorisation of its own: the caller needs credentials.read (they may know the set
 * exists and pick it), and a scoped caller only a set no device outside their scope uses (a set others' devices
 * log in with is not theirs to point at an address they chose). Why not, or null when they may.
 */
export async function whyNotUsable(db: DbOrTx, who: CredentialUser, setId: number): Promise<string | null> {
  if (who.abilities !== "all" && !who.abilities.has(CREDENTIAL_USE_ABILITY)) {
    return `using credential set ${setId} needs the ${CREDENTIAL_USE_ABILITY} ability, which this token or its role lacks`;
  }
  if (!(await reachesOnlyScope(db, who.scope, usingCredentials([setId])))) {
    return `credential set ${setId} is also used by devices outside your role's scope, so only a user who sees all of them may attach it`;
  }
  return null;
}

/** Refuses (403, naming the field) when the caller may not use the set. */
export async function refuseUnlessUsable(db: DbOrTx, who: CredentialUser, setId: number, field: string): Promise<void> {
  const why = await whyNotUsable(db, who, setId);
  if (why) throw new ApiError(403, `${field}: ${why}`, { [field]: [why] });
}

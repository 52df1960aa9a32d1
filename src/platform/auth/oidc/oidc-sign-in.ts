import type { Db } from "../../../db/client.ts";
import { applyDirectoryGroups } from "../directory/directory-users.ts";
import { USERNAME } from "../users.ts";
import type { SignedInClaims } from "./provider.ts";

/**
 * The netkeep username for the provider's account: preferred_username, else the e-mail address's local part,
 * else the subject, whichever first fits the username rule. Null when none does.
 */
export function usernameFor(claims: SignedInClaims): string | null {
  const candidates = [claims.username, claims.email?.split("@")[0] ?? null, claims.subject];
  return candidates.find((c): c is string => c !== null && USERNAME.pattern.test(c)) ?? null;
}

export type OidcSignIn =
  | { outcome: "ok"; userId: number; username: string }
  | { outcome: "refused"; userId: number | null; username: string; reason: string };

/**
 * Creates the account at its first sign-in (auth_source oidc) or brings its role in line with the group claim,
 * the same mapping LDAP users get; no mapped group refuses (and disables an existing account).
 */
export async function signInWithClaims(
  db: Db,
  claims: SignedInClaims,
  groupRoles: Record<string, string>,
  now: Date,
): Promise<OidcSignIn> {
  const username = usernameFor(claims);
  if (!username)
    return {
      outcome: "refused",
      userId: null,
      username: claims.subject.slice(0, 255),
      reason: "no usable username claim",
    };
  const applied = await applyDirectoryGroups(
    db,
    username,
    { email: claims.email, groups: claims.groups },
    groupRoles,
    now,
    "oidc",
  );
  return applied.refusal
    ? { outcome: "refused", userId: applied.userId, username, reason: applied.refusal }
    : { outcome: "ok", userId: applied.userId!, username };
}

import { directoryStillGrants, type DirectoryDeps, type ExternalSource } from "./directory/directory-users.ts";
import { oidcStillGrants } from "./oidc/refresh.ts";

/** A session's or token's user whose identity and groups live elsewhere: where, and when the groups were read. */
export type ExternalIdentity = { source: ExternalSource; checkedAt: Date | null };

/**
 * Whether a directory or single sign-on user may go on: their groups are read again at their source once the
 * source's refresh interval has passed (see directoryStillGrants and oidcStillGrants).
 */
export function externalStillGrants(
  deps: DirectoryDeps,
  user: { id: number; username: string } & ExternalIdentity,
  now: Date,
): Promise<boolean> {
  return user.source === "ldap" ? directoryStillGrants(deps, user, now) : oidcStillGrants(deps, user, now);
}

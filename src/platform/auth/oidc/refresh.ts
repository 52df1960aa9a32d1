import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../../db/client.ts";
import { users } from "../../../db/schema/index.ts";
import type { SecretBox } from "../../secrets/box.ts";
import { getSettings } from "../../settings/service.ts";
import { applyDirectoryGroups, type DirectoryDeps } from "../directory/directory-users.ts";
import { oidcProvider, ProviderError, refreshClaims } from "./provider.ts";

/**
 * Keeps a signed-in user's refresh token sealed for re-reading their groups later; none (the provider gave none)
 * forgets the old one, so the user signs in again after the refresh interval.
 */
export async function keepRefreshToken(
  deps: { db: DbOrTx; secrets: Pick<SecretBox, "encrypt"> },
  userId: number,
  refreshToken: string | null,
): Promise<void> {
  const sealed = refreshToken ? await deps.secrets.encrypt(refreshToken) : null;
  await deps.db.update(users).set({ oidcRefreshTokenEnc: sealed }).where(eq(users.id, userId));
}

/** Re-reads in progress, by user: concurrent requests of one user share one refresh (a rotated token is single-use). */
const inFlight = new Map<number, Promise<boolean>>();

/**
 * Whether a single sign-on user whose groups were read at `checkedAt` may go on now: within the oidc section's
 * group_refresh_minutes, yes; after it, their claims are read again at the provider with the refresh token kept
 * from their sign-in, and the record follows the groups (a new role, or disabled when none maps). No refresh
 * token, a provider that refuses it or cannot be asked, or single sign-on turned off: refused (fail closed, so
 * access does not outlive a removal at the provider); the user signs in again, which reads the groups afresh.
 */
export function oidcStillGrants(
  deps: DirectoryDeps,
  user: { id: number; username: string; checkedAt: Date | null },
  now: Date,
): Promise<boolean> {
  const running = inFlight.get(user.id);
  if (running) return running;
  const work = reread(deps, user, now).finally(() => inFlight.delete(user.id));
  inFlight.set(user.id, work);
  return work;
}

async function reread(
  deps: DirectoryDeps,
  user: { id: number; username: string; checkedAt: Date | null },
  now: Date,
): Promise<boolean> {
  // Within the interval nothing is asked of the provider (discovery included): most requests stop here.
  const { oidc } = (await getSettings(deps.db)).settings;
  if (!oidc.enabled) return false;
  const interval = oidc.group_refresh_minutes * 60_000;
  if (user.checkedAt && now.getTime() - user.checkedAt.getTime() < interval) return true;
  let provider;
  try {
    provider = await oidcProvider(deps);
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    deps.logger.warn("single sign-on user's groups could not be re-read (discovery failed); request refused", {
      username: user.username,
      reason: err.message,
    });
    return false;
  }
  if (!provider) return false;
  const [row] = await deps.db.select({ sealed: users.oidcRefreshTokenEnc }).from(users).where(eq(users.id, user.id));
  if (!row?.sealed) return false;
  let refreshed;
  try {
    refreshed = await refreshClaims(provider, await deps.secrets.decrypt(row.sealed));
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    deps.logger.warn("single sign-on user's groups could not be re-read; request refused", {
      username: user.username,
      reason: err.message,
    });
    // A refused refresh token is spent: the next request goes straight to "sign in again".
    await deps.db.update(users).set({ oidcRefreshTokenEnc: null }).where(eq(users.id, user.id));
    return false;
  }
  await deps.db
    .update(users)
    .set({ oidcRefreshTokenEnc: await deps.secrets.encrypt(refreshed.refreshToken) })
    .where(eq(users.id, user.id));
  const applied = await applyDirectoryGroups(
    deps.db,
    user.username,
    { email: refreshed.claims.email, groups: refreshed.claims.groups },
    provider.settings.group_roles,
    now,
    "oidc",
  );
  return !applied.refusal;
}

import type { Clock } from "../../kernel/clock.ts";
import type { Db } from "../../db/client.ts";
import type { Logger } from "../../kernel/logger.ts";
import { recordActivity } from "../audit/record.ts";
import { recordEvent } from "../outbox/record.ts";
import type { SecretBox } from "../secrets/box.ts";
import { directoryConfigs, signInWithDirectory } from "./directory/directory-users.ts";
import { DirectoryError } from "./directory/ldap.ts";
import { MAIN_DIRECTORY } from "../settings/schema.ts";
import type { LoginThrottle } from "./login-throttle.ts";
import { hashPassword, verifyPassword } from "./passwords.ts";
import { randomSecret } from "./token-value.ts";
import { findUserByName, USERNAME } from "./users.ts";

export type SignInDeps = { db: Db; secrets: SecretBox; logger: Logger; clock: Clock };
export type SignInMethod = "local" | "ldap" | "oidc";

export type SignInResult =
  | { ok: true; userId: number; username: string; method: SignInMethod; directory?: string }
  | { ok: false; status: 401 | 422 | 429 | 503; message: string; retryAfter?: number };

export const WRONG_LOGIN = "Wrong username or password, or the account is disabled.";
const DIRECTORY_DOWN =
  "The directory cannot be reached right now, so directory accounts cannot sign in. Try again later; local accounts still can.";

let decoyHash: Promise<string> | undefined;
/** Unknown usernames cost the same password check as known ones, so timing does not tell which exist. */
const decoy = () => (decoyHash ??= hashPassword(randomSecret()));

/** A refused sign-in, in the activity log and as an event, and the lockout it may have started. */
export async function recordSignInFailure(
  deps: SignInDeps,
  throttle: LoginThrottle,
  input: { username: string; ip: string },
  userId: number | null,
  reason: string,
) {
  const now = deps.clock.now();
  const username = input.username.slice(0, 255);
  const lock = throttle.retryAfterSeconds(input.username, input.ip);
  await deps.db.transaction(async (tx) => {
    await recordEvent(tx, "user.login_failed", { username, ip: input.ip || null, reason }, now);
    await recordActivity(
      tx,
      { system: "web login" },
      {
        action: "user.login_failed",
        subjectType: "user",
        subjectId: userId,
        after: { username, ip: input.ip || null, reason },
      },
      now,
    );
    // A locked key is refused before it gets here, so a lock seen now is one this failure started.
    if (lock > 0) {
      await recordEvent(tx, "user.locked_out", { username, ip: input.ip || null, retry_after_seconds: lock }, now);
      await recordActivity(
        tx,
        { system: "web login" },
        {
          action: "user.locked_out",
          subjectType: "user",
          subjectId: userId,
          after: { username, ip: input.ip || null, retry_after_seconds: lock },
        },
        now,
      );
    }
  });
  return lock;
}

/**
 * Checks a username and password from the login form (recordSignIn records the sign-in once it is complete): a local user's against their hash, anyone else's against
 * the directory when one is configured. Local users never depend on the directory, so a local administrator
 * still signs in while it is down (break-glass). Throttled per username and address before anything is checked.
 */
export async function checkSignIn(
  deps: SignInDeps,
  throttle: LoginThrottle,
  input: { username: string; password: string; ip: string },
): Promise<SignInResult> {
  const { username, password, ip } = input;
  if (!username || !password) return { ok: false, status: 422, message: "Enter both a username and a password." };
  // No account has such a name: answered before the throttle, which would otherwise keep one entry per name sent.
  if (!USERNAME.pattern.test(username)) return { ok: false, status: 401, message: WRONG_LOGIN };
  const wait = throttle.begin(username, ip);
  if (wait > 0)
    return {
      ok: false,
      status: 429,
      retryAfter: wait,
      message: `Too many failed logins for '${username}' from your address. Wait ${wait} seconds, then try again.`,
    };

  const refuse = async (userId: number | null, reason: string): Promise<SignInResult> => {
    const lock = await recordSignInFailure(deps, throttle, input, userId, reason);
    return {
      ok: false,
      status: 401,
      message: lock > 0 ? `${WRONG_LOGIN} Too many failures: wait ${lock} seconds before the next try.` : WRONG_LOGIN,
    };
  };
  const user = await findUserByName(deps.db, username);
  const directories = user?.authSource === "local" ? null : await directoryConfigs(deps);
  let result: { userId: number; username: string; method: SignInMethod; directory?: string };
  if (!directories) {
    const passwordOk = await verifyPassword(password, user?.passwordHash ?? (await decoy()));
    // A disabled account fails like a wrong password: the form does not confirm which accounts exist.
    // A directory user's local hash (an administrator may have set one) never opens the account.
    if (!user || user.authSource !== "local" || !passwordOk || !user.enabled) {
      const reason = !user
        ? "unknown user"
        : user.authSource === "ldap"
          ? "directory sign-in is off"
          : !passwordOk
            ? "wrong password"
            : "disabled user";
      return refuse(user?.id ?? null, reason);
    }
    result = { userId: user.id, username: user.username, method: "local" };
  } else {
    try {
      // A local user's check costs one password hash; a name sent to the directories costs at least as much, so
      // how long a refusal takes does not tell local accounts from names the directories do not know.
      const [signedIn] = await Promise.all([
        signInWithDirectory(deps, directories.configs, username, password, deps.clock.now()),
        decoy().then((hash) => verifyPassword(password, hash)),
      ]);
      if (signedIn.outcome !== "ok")
        return refuse(
          signedIn.userId,
          signedIn.directory && signedIn.directory !== MAIN_DIRECTORY
            ? `${signedIn.reason} (directory ${signedIn.directory})`
            : signedIn.reason,
        );
      result = {
        userId: signedIn.userId,
        username: user?.username ?? username,
        method: "ldap",
        directory: signedIn.directory,
      };
    } catch (err) {
      if (!(err instanceof DirectoryError)) throw err;
      deps.logger.warn("directory sign-in failed: the directory could not be asked", { username, reason: err.message });
      await recordSignInFailure(deps, throttle, input, user?.id ?? null, "directory unreachable");
      return { ok: false, status: 503, message: DIRECTORY_DOWN };
    }
  }
  throttle.succeed(username, ip);
  return { ok: true, ...result };
}

/** A completed sign-in (password, and second factor when there is one), in the activity log and as an event. */
export async function recordSignIn(
  deps: SignInDeps,
  user: { userId: number; username: string; method: SignInMethod; directory?: string },
  ip: string,
  secondFactor: "none" | "totp" | "recovery_code",
): Promise<void> {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await recordEvent(
      tx,
      "user.login",
      {
        user_id: user.userId,
        username: user.username,
        ip: ip || null,
        method: user.method,
        ...(user.directory ? { directory: user.directory } : {}),
        second_factor: secondFactor,
      },
      now,
    );
    await recordActivity(
      tx,
      { userId: user.userId, username: user.username, tokenId: null, tokenName: "web session", ip },
      {
        action: "user.login",
        subjectType: "user",
        subjectId: user.userId,
        after: {
          method: user.method,
          ...(user.directory ? { directory: user.directory } : {}),
          second_factor: secondFactor,
        },
      },
      now,
    );
  });
}

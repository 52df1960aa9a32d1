import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import QRCode from "qrcode";
import type { Db, DbOrTx } from "../../../db/client.ts";
import { roles, users } from "../../../db/schema/index.ts";
import { recordActivity, type Actor } from "../../audit/record.ts";
import { recordEvent } from "../../outbox/record.ts";
import { getSettings } from "../../settings/service.ts";
import { ADMIN_ROLE } from "../roles.ts";
import type { SecretBox } from "../../secrets/box.ts";
import { hashRecoveryCode, newRecoveryCodes } from "./recovery-codes.ts";
import { matchingStep, newTotpSecret, otpauthUri } from "./totp.ts";

export type MfaDeps = { db: Db; secrets: SecretBox };
type Change = "enabled" | "disabled" | "reset" | "recovery_codes_renewed" | "recovery_code_used";

async function userOf(db: DbOrTx, userId: number) {
  const [user] = await db
    .select({
      id: users.id,
      username: users.username,
      authSource: users.authSource,
      totpSecretEnc: users.totpSecretEnc,
      totpPendingEnc: users.totpPendingEnc,
      recoveryCodeHashes: users.recoveryCodeHashes,
      roleName: roles.name,
      roleBuiltin: roles.builtin,
    })
    .from(users)
    .innerJoin(roles, eq(roles.id, users.roleId))
    .where(eq(users.id, userId));
  return user;
}

/** A second factor's change in the activity log and as a `user.mfa_changed` event (never a secret or a code). */
async function recordChange(
  tx: DbOrTx,
  actor: Actor,
  user: { id: number; username: string },
  change: Change,
  left: number,
  now: Date,
) {
  await recordActivity(
    tx,
    actor,
    { action: `user.mfa_${change}`, subjectType: "user", subjectId: user.id, after: { recovery_codes_left: left } },
    now,
  );
  await recordEvent(
    tx,
    "user.mfa_changed",
    { user_id: user.id, username: user.username, change, recovery_codes_left: left },
    now,
  );
}

export type SecondFactorState = { enabled: boolean; recoveryCodesLeft: number; required: boolean };

/** Whether the user has a second factor, and whether the settings' policy demands one of them (local users only). */
export async function secondFactorState(db: DbOrTx, userId: number): Promise<SecondFactorState> {
  const user = await userOf(db, userId);
  if (!user) return { enabled: false, recoveryCodesLeft: 0, required: false };
  const policy = (await getSettings(db)).settings.mfa.required_for;
  const isAdmin = user.roleBuiltin && user.roleName.toLowerCase() === ADMIN_ROLE;
  const required = user.authSource === "local" && (policy === "all" || (policy === "admins" && isAdmin));
  return { enabled: user.totpSecretEnc !== null, recoveryCodesLeft: user.recoveryCodeHashes.length, required };
}

export type Enrolment = { secret: string; uri: string; qrSvg: string };

/**
 * A secret to enrol, shown (as a QR code and as text) until a code from it is confirmed. Showing the page again
 * shows the same secret, so a refresh does not invalidate what the phone already scanned.
 */
export async function beginEnrolment(deps: MfaDeps, userId: number, issuer: string): Promise<Enrolment> {
  const user = await userOf(deps.db, userId);
  if (!user) throw new Error(`user ${userId} is gone`);
  let secret = user.totpPendingEnc ? await deps.secrets.decrypt(user.totpPendingEnc) : null;
  if (!secret) {
    secret = newTotpSecret();
    await deps.db
      .update(users)
      .set({ totpPendingEnc: await deps.secrets.encrypt(secret) })
      .where(eq(users.id, userId));
  }
  const uri = otpauthUri({ issuer, account: user.username, secret });
  const qrSvg = await QRCode.toString(uri, { type: "svg", margin: 2, width: 200, errorCorrectionLevel: "M" });
  return { secret, uri, qrSvg };
}

/** Turns the shown secret on when `code` is one of its codes; returns the recovery codes, shown this once. */
export async function confirmEnrolment(
  deps: MfaDeps,
  actor: Actor,
  userId: number,
  code: string,
  now: Date,
): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false; message: string }> {
  const user = await userOf(deps.db, userId);
  if (!user?.totpPendingEnc) return { ok: false, message: "Start again: no secret is waiting to be confirmed." };
  const secret = await deps.secrets.decrypt(user.totpPendingEnc);
  const step = await matchingStep(secret, code.trim(), now);
  if (step === null)
    return {
      ok: false,
      message: "That code does not match: check the phone's clock, and type the 6 digits the app shows now.",
    };
  const recoveryCodes = newRecoveryCodes();
  const hashes = await Promise.all(recoveryCodes.map(hashRecoveryCode));
  const sealed = await deps.secrets.encrypt(secret);
  await deps.db.transaction(async (tx) => {
    await tx
      .update(users)
      .set({
        totpSecretEnc: sealed,
        totpPendingEnc: null,
        totpLastStep: step,
        recoveryCodeHashes: hashes,
        updatedAt: now,
      })
      .where(eq(users.id, userId));
    await recordChange(tx, actor, user, "enabled", hashes.length, now);
  });
  return { ok: true, recoveryCodes };
}

export type SecondFactorCheck =
  | { ok: true; via: "totp" | "recovery_code"; recoveryCodesLeft: number }
  | { ok: false; reason: "wrong code" | "replayed code" };

/**
 * Checks a code at sign-in: six digits are a TOTP code, anything else a recovery code. A TOTP code is taken
 * once (its step must be later than the last accepted one), a recovery code once (it is removed), each by a
 * conditional update, so two requests carrying the same code cannot both pass.
 */
export async function verifySecondFactor(
  deps: MfaDeps,
  actor: Actor,
  userId: number,
  typed: string,
  now: Date,
): Promise<SecondFactorCheck> {
  const user = await userOf(deps.db, userId);
  if (!user?.totpSecretEnc) return { ok: false, reason: "wrong code" };
  const code = typed.trim();
  if (/^\d{6}$/.test(code)) {
    const step = await matchingStep(await deps.secrets.decrypt(user.totpSecretEnc), code, now);
    if (step === null) return { ok: false, reason: "wrong code" };
    const taken = await deps.db
      .update(users)
      .set({ totpLastStep: step })
      .where(and(eq(users.id, userId), or(isNull(users.totpLastStep), lt(users.totpLastStep, step))))
      .returning({ id: users.id });
    return taken.length
      ? { ok: true, via: "totp", recoveryCodesLeft: user.recoveryCodeHashes.length }
      : { ok: false, reason: "replayed code" };
  }
  const hash = await hashRecoveryCode(code);
  if (!user.recoveryCodeHashes.includes(hash)) return { ok: false, reason: "wrong code" };
  const left = user.recoveryCodeHashes.filter((h) => h !== hash);
  return deps.db.transaction(async (tx) => {
    const taken = await tx
      .update(users)
      .set({ recoveryCodeHashes: left })
      .where(and(eq(users.id, userId), sql`${users.recoveryCodeHashes} = ${JSON.stringify(user.recoveryCodeHashes)}`))
      .returning({ id: users.id });
    if (!taken.length) return { ok: false, reason: "replayed code" } as const;
    await recordChange(tx, actor, user, "recovery_code_used", left.length, now);
    return { ok: true, via: "recovery_code", recoveryCodesLeft: left.length } as const;
  });
}

/** Removes the second factor: the user's own choice (disabled) or an administrator's for a lost phone (reset). */
export async function removeSecondFactor(
  db: Db,
  actor: Actor,
  userId: number,
  change: "disabled" | "reset",
  now: Date,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const user = await userOf(tx, userId);
    if (!user?.totpSecretEnc) return false;
    await tx
      .update(users)
      .set({ totpSecretEnc: null, totpPendingEnc: null, totpLastStep: null, recoveryCodeHashes: [], updatedAt: now })
      .where(eq(users.id, userId));
    await recordChange(tx, actor, user, change, 0, now);
    return true;
  });
}

/** New recovery codes in place of all the old ones; shown this once. */
export async function renewRecoveryCodes(db: Db, actor: Actor, userId: number, now: Date): Promise<string[] | null> {
  const codes = newRecoveryCodes();
  const hashes = await Promise.all(codes.map(hashRecoveryCode));
  return db.transaction(async (tx) => {
    const user = await userOf(tx, userId);
    if (!user?.totpSecretEnc) return null;
    await tx.update(users).set({ recoveryCodeHashes: hashes, updatedAt: now }).where(eq(users.id, userId));
    await recordChange(tx, actor, user, "recovery_codes_renewed", hashes.length, now);
    return codes;
  });
}

import * as client from "openid-client";
import type { DbOrTx } from "../../../db/client.ts";
import { getSettings, oidcClientSecret } from "../../settings/service.ts";
import type { Settings } from "../../settings/schema.ts";
import type { SecretBox } from "../../secrets/box.ts";

/** The provider could not be asked (discovery, token endpoint, keys), or its answer failed a check. */
export class ProviderError extends Error {}

/**
 * The library's message with the check that failed: openid-client says "invalid response encountered" and keeps
 * the specific one (e.g. an unexpected "aud" claim) as the cause.
 */
function failed(err: unknown): ProviderError {
  const message = (err as Error).message;
  const cause = (err as { cause?: unknown }).cause;
  const detail = cause instanceof Error && cause.message && cause.message !== message ? `: ${cause.message}` : "";
  return new ProviderError(`${message}${detail}`);
}

export type OidcSettings = Settings["oidc"];
export type OidcProvider = { settings: OidcSettings; config: client.Configuration };

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/i;

/**
 * The single sign-on settings with the provider's discovered configuration, or null when single sign-on is off.
 * Discovery runs at each sign-in, so a changed issuer or rotated keys take effect at once. Plain http is allowed
 * for a loopback issuer only (a provider on the same host); anywhere else it would expose codes and tokens.
 */
export async function oidcProvider(deps: { db: DbOrTx; secrets: SecretBox }): Promise<OidcProvider | null> {
  const { settings } = await getSettings(deps.db);
  const oidc = settings.oidc;
  if (!oidc.enabled || !oidc.issuer || !oidc.client_id) return null;
  const issuer = new URL(oidc.issuer);
  const secret = await oidcClientSecret(deps.db, deps.secrets);
  const insecure = issuer.protocol === "http:" && LOOPBACK.test(issuer.hostname);
  try {
    const config = await client.discovery(
      issuer,
      oidc.client_id,
      undefined,
      secret ? client.ClientSecretBasic(secret) : client.None(),
      {
        // The library checks an ID token's signature only when asked (it trusts the TLS connection to the token
        // endpoint by default): asked here, against the provider's published keys (jwks_uri), so a token its
        // keys did not sign is refused wherever it came from.
        execute: [...(insecure ? [client.allowInsecureRequests] : []), client.enableNonRepudiationChecks],
        timeout: 10,
      },
    );
    return { settings: oidc, config };
  } catch (err) {
    throw new ProviderError(`discovery at ${issuer.href} failed: ${(err as Error).message}`);
  }
}

/** What a sign-in started and the callback must match: kept server-side, used once. */
export type PendingSignIn = {
  state: string;
  nonce: string;
  codeVerifier: string;
  next: string | undefined;
  expiresAt: number;
};

/** Where the browser goes to sign in at the provider, with a new state, nonce and PKCE verifier. */
export async function startSignIn(
  provider: OidcProvider,
  redirectUri: string,
  next: string | undefined,
  now: Date,
): Promise<{ url: URL; pending: PendingSignIn }> {
  const codeVerifier = client.randomPKCECodeVerifier();
  const pending: PendingSignIn = {
    state: client.randomState(),
    nonce: client.randomNonce(),
    codeVerifier,
    next,
    expiresAt: now.getTime() + 10 * 60_000,
  };
  const url = client.buildAuthorizationUrl(provider.config, {
    redirect_uri: redirectUri,
    scope: provider.settings.scopes,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
  });
  return { url, pending };
}

export type SignedInClaims = { subject: string; username: string | null; email: string | null; groups: string[] };

/** The claims netkeep uses, from an ID token or a userinfo answer; the groups come from the configured claim. */
function claimsOf(claims: Record<string, unknown> & { sub: string }, settings: OidcSettings): SignedInClaims {
  const raw = claims[settings.group_claim];
  const groups = Array.isArray(raw)
    ? raw.filter((g): g is string => typeof g === "string")
    : typeof raw === "string"
      ? [raw]
      : [];
  const text = (v: unknown) => (typeof v === "string" && v ? v : null);
  return { subject: claims.sub, username: text(claims.preferred_username), email: text(claims.email), groups };
}

/**
 * Redeems the callback's code: the library checks state, PKCE, and the ID token's signature (against the
 * provider's published keys: see oidcProvider), issuer, audience, nonce and expiry. Returns the claims netkeep
 * uses and the refresh token, when the provider gave one.
 */
export async function finishSignIn(
  provider: OidcProvider,
  callbackUrl: URL,
  pending: PendingSignIn,
): Promise<{ claims: SignedInClaims; refreshToken: string | null }> {
  let claims: client.IDToken | undefined;
  let refreshToken: string | null = null;
  try {
    const tokens = await client.authorizationCodeGrant(provider.config, callbackUrl, {
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      pkceCodeVerifier: pending.codeVerifier,
      idTokenExpected: true,
    });
    claims = tokens.claims();
    refreshToken = tokens.refresh_token ?? null;
  } catch (err) {
    throw failed(err);
  }
  if (!claims) throw new ProviderError("the provider returned no ID token");
  return { claims: claimsOf(claims, provider.settings), refreshToken };
}

/**
 * The user's claims read again with their refresh token (the library checks a returned ID token as at sign-in;
 * without one, the userinfo endpoint answers). Returns the refresh token to keep: a new one when the provider
 * rotated it. A provider that refuses the token (the user signed out there, was removed, or the grant was
 * revoked) is a ProviderError, as is one that cannot be reached.
 */
export async function refreshClaims(
  provider: OidcProvider,
  refreshToken: string,
): Promise<{ claims: SignedInClaims; refreshToken: string }> {
  try {
    const tokens = await client.refreshTokenGrant(provider.config, refreshToken);
    const fromIdToken = tokens.claims();
    const claims =
      fromIdToken ?? (await client.fetchUserInfo(provider.config, tokens.access_token, client.skipSubjectCheck));
    return { claims: claimsOf(claims, provider.settings), refreshToken: tokens.refresh_token ?? refreshToken };
  } catch (err) {
    throw failed(err);
  }
}

/** The provider's RP-initiated logout URL, or null when it offers none. */
export function endSessionUrl(provider: OidcProvider, postLogoutRedirectUri: string): URL | null {
  if (!provider.config.serverMetadata().end_session_endpoint) return null;
  return client.buildEndSessionUrl(provider.config, {
    client_id: provider.settings.client_id!,
    post_logout_redirect_uri: postLogoutRedirectUri,
  });
}

import { fileURLToPath } from "node:url";
import { freePort, start, stopGroup, waitForHttp } from "./process.ts";

const SCRIPT = fileURLToPath(new URL("./oidc-provider.mjs", import.meta.url));

/** How the next ID token is spoiled (see test/helpers/oidc-provider.mjs). */
export type TamperMode = "audience" | "nonce" | "issuer" | "expired" | "signature";

/** A running oidc-provider (test/helpers/oidc-provider.mjs) on loopback; stop() ends its process. */
export async function startOidcProvider(client: {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  postLogoutUri: string;
}) {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const spawned = start(process.execPath, [SCRIPT], {
    OIDC_PORT: String(port),
    OIDC_CLIENT_ID: client.clientId,
    OIDC_CLIENT_SECRET: client.clientSecret,
    OIDC_REDIRECT_URI: client.redirectUri,
    OIDC_POST_LOGOUT_URI: client.postLogoutUri,
  });
  try {
    await waitForHttp(`${issuer}/.well-known/openid-configuration`, spawned);
  } catch (err) {
    stopGroup(spawned);
    throw err;
  }
  const control = async (path: string, body?: unknown) => {
    const res = await fetch(`${issuer}${path}`, {
      method: "POST",
      body: body === undefined ? "" : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`oidc-provider ${path}: ${res.status}`);
  };
  return {
    issuer,
    output: spawned.output,
    /** The account's groups from now on, as an administrator at the provider would change them. */
    setGroups: (account: string, groups: string[]) =>
      control(`/test/groups?account=${encodeURIComponent(account)}`, groups),
    /**
     * The next token response carries an ID token re-signed with the provider's key for another audience, with
     * another nonce, naming another issuer, or already expired; or one signed with a key the provider does not publish.
     */
    tamperNextIdToken: (mode: TamperMode | "none") => control(`/test/tamper?mode=${mode}`),
    stop: () => {
      stopGroup(spawned);
      return spawned.exited;
    },
  };
}

// A real OpenID Connect provider (npm oidc-provider) for single sign-on tests, run as its own process:
// node test/helpers/oidc-provider.mjs, configured by environment (OIDC_PORT, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET,
// OIDC_REDIRECT_URI, OIDC_POST_LOGOUT_URI). Accounts: alice (group netkeep-admins), bob (group contractors),
// dana (group staff);
// its development login form accepts any password. Consent is granted automatically.
import { createServer } from "node:http";
import Provider from "oidc-provider";

const port = Number(process.env.OIDC_PORT);
const issuer = `http://127.0.0.1:${port}`;
const ACCOUNTS = {
  alice: { preferred_username: "alice", email: "alice@example.test", groups: ["netkeep-admins", "staff"] },
  bob: { preferred_username: "bob", email: "bob@example.test", groups: ["contractors"] },
  // Shares her name with a local netkeep user in the tests.
  dana: { preferred_username: "dana", email: "dana@example.test", groups: ["staff"] },
};

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.OIDC_CLIENT_ID,
      client_secret: process.env.OIDC_CLIENT_SECRET,
      redirect_uris: [process.env.OIDC_REDIRECT_URI],
      post_logout_redirect_uris: [process.env.OIDC_POST_LOGOUT_URI],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  claims: { openid: ["sub"], profile: ["preferred_username"], email: ["email"], groups: ["groups"] },
  scopes: ["openid", "profile", "email", "groups"],
  // The groups in the ID token itself, as Entra ID and Keycloak put them.
  conformIdTokenClaims: false,
  async findAccount(_ctx, id) {
    const account = ACCOUNTS[id];
    if (!account) return undefined;
    return {
      accountId: id,
      async claims() {
        return { sub: id, ...account };
      },
    };
  },
  async loadExistingGrant(ctx) {
    const grant = new provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope("openid profile email groups");
    grant.addOIDCClaims(["preferred_username", "email", "groups"]);
    await grant.save();
    return grant;
  },
});

createServer(provider.callback()).listen(port, "127.0.0.1", () => console.log(`listening ${issuer}`));

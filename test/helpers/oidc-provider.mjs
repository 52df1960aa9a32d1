// A real OpenID Connect provider (npm oidc-provider) for single sign-on tests, run as its own process:
// node test/helpers/oidc-provider.mjs, configured by environment (OIDC_PORT, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET,
// OIDC_REDIRECT_URI, OIDC_POST_LOGOUT_URI). Accounts: alice (group netkeep-admins), bob (group contractors),
// dana (group staff);
// its development login form accepts any password. Consent is granted automatically.
// A second client ("other-app", the same redirect URI) exists so a test can have an ID token issued for another
// audience. Test controls, outside the provider's own routes:
//   POST /test/groups?account=NAME   body: a JSON array   the account's groups from now on (refreshes read them)
//   POST /test/tamper?mode=MODE      the next token response's ID token is re-issued, signed with the provider's
//                                    key: "audience" for other-app, "nonce" with another nonce, "issuer" naming
//                                    another issuer, "expired" past its expiry; "signature": signed with a key
//                                    the provider does not publish. "none" stops it.
import { generateKeyPairSync, sign } from "node:crypto";
import { createServer } from "node:http";
import Provider from "oidc-provider";

const port = Number(process.env.OIDC_PORT);
const issuer = `http://127.0.0.1:${port}`;
const ACCOUNTS = {
  alice: { preferred_username: "alice", email: "alice@example.test", groups: ["netkeep-admins", "staff"] },
  bob: { preferred_username: "bob", email: "bob@example.test", groups: ["contractors"] },
  // Shares her name with a local netkeep user in the tests.
  dana: { preferred_username: "dana", email: "dana@example.test", groups: ["staff"] },
  // Moved between groups during a test (POST /test/groups).
  carl: { preferred_username: "carl", email: "carl@example.test", groups: ["netkeep-admins"] },
};

// The provider's signing key, made here so a tamper can sign a token the provider itself would not; and a key it
// does not publish.
const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const { privateKey: strangerKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const KEY_ID = "netkeep-test-key";

const provider = new Provider(issuer, {
  jwks: { keys: [{ ...privateKey.export({ format: "jwk" }), kid: KEY_ID, use: "sig", alg: "RS256" }] },
  clients: [
    {
      client_id: process.env.OIDC_CLIENT_ID,
      client_secret: process.env.OIDC_CLIENT_SECRET,
      redirect_uris: [process.env.OIDC_REDIRECT_URI],
      post_logout_redirect_uris: [process.env.OIDC_POST_LOGOUT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
    {
      client_id: "other-app",
      client_secret: "other-app-secret",
      redirect_uris: [process.env.OIDC_REDIRECT_URI],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  // A refresh token for every client allowed the grant (no offline_access consent step in the tests).
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
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

let tamper = "none";
provider.use(async (ctx, next) => {
  await next();
  if (tamper === "none" || ctx.path !== "/token" || ctx.method !== "POST" || !ctx.body?.id_token) return;
  const mode = tamper;
  tamper = "none";
  const claims = JSON.parse(Buffer.from(ctx.body.id_token.split(".")[1], "base64url").toString());
  if (mode === "issuer" || mode === "expired" || mode === "signature") {
    // Everything else as issued (audience, nonce, and so on), signed by hand.
    const now = Math.floor(Date.now() / 1000);
    const payload =
      mode === "issuer"
        ? { ...claims, iss: "http://127.0.0.1:1/another-issuer" }
        : mode === "expired"
          ? { ...claims, iat: now - 7200, exp: now - 3600 }
          : claims;
    const part = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const input = `${part({ alg: "RS256", typ: "JWT", kid: KEY_ID })}.${part(payload)}`;
    const key = mode === "signature" ? strangerKey : privateKey;
    const signature = sign("sha256", Buffer.from(input), key).toString("base64url");
    ctx.body = { ...ctx.body, id_token: `${input}.${signature}` };
    return;
  }
  const client = mode === "audience" ? await provider.Client.find("other-app") : ctx.oidc.client;
  const token = new provider.IdToken({ sub: claims.sub }, { ctx, client });
  for (const key of ["sub", "preferred_username", "email", "groups"])
    if (claims[key] !== undefined) token.set(key, claims[key]);
  token.set("nonce", mode === "nonce" ? "a-nonce-netkeep-never-sent" : claims.nonce);
  ctx.body = { ...ctx.body, id_token: await token.issue({ use: "idtoken" }) };
});

const callback = provider.callback();
createServer((req, res) => {
  const url = new URL(req.url, issuer);
  if (req.method === "POST" && url.pathname === "/test/tamper") {
    tamper = url.searchParams.get("mode") ?? "none";
    return res.end("ok");
  }
  if (req.method === "POST" && url.pathname === "/test/groups") {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      ACCOUNTS[url.searchParams.get("account")].groups = JSON.parse(body);
      res.end("ok");
    });
    return;
  }
  callback(req, res);
}).listen(port, "127.0.0.1", () => console.log(`listening ${issuer}`));

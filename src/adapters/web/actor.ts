import type { Actor } from "../../platform/audit/record.ts";
import type { WebSession } from "../../platform/auth/sessions.ts";

/** Who a web-interface write is recorded as: the logged-in user, with no API token. */
export const webActor = (session: WebSession, ip: string): Actor => ({
  userId: session.userId,
  username: session.username,
  tokenId: null,
  tokenName: "web session",
  ip,
});

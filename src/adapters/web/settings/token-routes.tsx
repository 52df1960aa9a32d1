import { eq } from "drizzle-orm";
import type { Hono } from "hono";
import type { Ability } from "../../../platform/auth/abilities.ts";
import { issueTokenRecorded, revokeTokenRecorded } from "../../../platform/auth/token-audit.ts";
import { apiTokens } from "../../../db/schema/index.ts";
import { webActor } from "../actor.ts";
import type { WebEnv } from "../env.ts";
import { renderProblem } from "../layout.tsx";
import { renderRestApiPage } from "./page.tsx";
import { checkTokenForm } from "./tokens.tsx";

/* The token forms' answers: beside the page they re-render (page.tsx shows tokens.tsx's tab), so neither imports the other. */

export function registerTokenRoutes(web: Hono<WebEnv>): void {
  web.post("/settings/restapi/tokens", async (c) => {
    const form = await c.req.parseBody({ all: true });
    const { name, checked, errors } = await checkTokenForm(c, form);
    if (errors.length) return renderRestApiPage(c, 422, "api-token", { tokens: { errors, name, checked } });

    const abilities = checked as Ability[];
    const { db, clock } = c.var.services;
    const now = clock.now();
    const session = c.var.session;
    const token = await issueTokenRecorded(
      db,
      webActor(session, c.var.clientIp),
      { userId: session.userId, name, abilities },
      now,
    );
    return renderRestApiPage(c, 201, "api-token", {
      tokens: { created: { id: token.id, name, value: token.value, abilities } },
    });
  });

  web.post("/settings/restapi/tokens/:id/revoke", async (c) => {
    const id = Number(c.req.param("id"));
    const { db, clock } = c.var.services;
    const [token] = Number.isSafeInteger(id) ? await db.select().from(apiTokens).where(eq(apiTokens.id, id)) : [];
    if (!token) {
      return renderProblem(
        c,
        404,
        {
          title: "No such token",
          message: `There is no API token with id ${c.req.param("id")}; it may have been deleted with its user.`,
          next: { href: "/settings/restapi?tab=api-token", label: "Back to API tokens" },
        },
        c.var.session,
      );
    }
    const now = clock.now();
    const revoked = await revokeTokenRecorded(db, webActor(c.var.session, c.var.clientIp), id, now);
    return c.redirect(`/settings/restapi?tab=api-token&${revoked ? "revoked" : "already_revoked"}=${id}`, 303);
  });
}

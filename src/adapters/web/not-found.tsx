import type { Context } from "hono";
import type { WebEnv } from "./env.ts";
import { currentSession } from "./guard.ts";
import { renderProblem } from "./layout.tsx";
import { viewerAuth } from "./viewer.ts";

/**
 * An address outside the API that no page answers: a page inside the layout (with the menu when logged in),
 * never the API's JSON. `allowed` names the methods the path does take, for a form posted to a page (405).
 */
export async function webNotFound(c: Context<WebEnv>, allowed: string[] = []) {
  const session = await currentSession(c);
  if (session) c.set("auth", await viewerAuth(c, session));
  const next = session ? { href: "/dashboard", label: "Go to the dashboard" } : { href: "/login", label: "Log in" };
  if (allowed.length) {
    c.header("Allow", allowed.join(", "));
    return renderProblem(
      c,
      405,
      {
        title: "Not a form address",
        message: `${c.req.path} takes ${allowed.join(", ")}, not ${c.req.method}.`,
        next,
      },
      session ?? undefined,
    );
  }
  return renderProblem(
    c,
    404,
    {
      title: "Page not found",
      message: `There is no page at ${c.req.path}. It may have moved, or the link has a typo.`,
      next,
    },
    session ?? undefined,
  );
}

import type { Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { WebEnv } from "../env.ts";
import { renderPage, renderProblem } from "../layout.tsx";
import { aiAgentDocsTab } from "./ai-agent-docs.tsx";
import { documentationTab } from "./documentation.tsx";
import { revokeNotice, tokenTab, type TokenFormState } from "./tokens.tsx";

export const TABS = [
  { id: "api-token", label: "API Token" },
  { id: "documentation", label: "Documentation" },
  { id: "ai-agent-docs", label: "AI Agent Docs" },
] as const;
export type TabId = (typeof TABS)[number]["id"];

const isTab = (value: string): value is TabId => TABS.some((t) => t.id === value);

function Tabs(props: { current: TabId }) {
  return (
    <nav class="tabs" aria-label="REST API Access sections">
      {TABS.map((t) => (
        <a
          href={`/settings/restapi?tab=${t.id}`}
          aria-current={t.id === props.current ? "page" : undefined}
          data-tab={t.id}
        >
          {t.label}
        </a>
      ))}
    </nav>
  );
}

/** Settings -> REST API Access with one tab open; `extras` carries what a form submission left to show. */
export async function renderRestApiPage(
  c: Context<WebEnv>,
  status: ContentfulStatusCode,
  tab: TabId,
  extras: { tokens?: TokenFormState } = {},
) {
  const body =
    tab === "api-token"
      ? await tokenTab(c, { notice: await revokeNotice(c), ...extras.tokens })
      : tab === "documentation"
        ? documentationTab(c)
        : await aiAgentDocsTab(c);
  return renderPage(c, status, {
    title: "REST API Access",
    session: c.var.session,
    children: (
      <div>
        <h1>REST API Access</h1>
        <Tabs current={tab} />
        <div id={`tab-${tab}`}>{body}</div>
      </div>
    ),
  });
}

export function registerRestApiPage(web: Hono<WebEnv>): void {
  web.get("/settings/restapi", async (c) => {
    const tab = c.req.query("tab") ?? "api-token";
    if (!isTab(tab)) {
      return renderProblem(
        c,
        404,
        {
          title: "No such tab",
          message: `REST API Access has no tab '${tab}'; use one of: ${TABS.map((t) => t.id).join(", ")}.`,
          next: { href: "/settings/restapi", label: "Open REST API Access" },
        },
        c.var.session,
      );
    }
    return renderRestApiPage(c, 200, tab);
  });
}

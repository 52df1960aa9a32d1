import type { Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { WebEnv } from "../env.ts";
import { renderPage, renderProblem } from "../layout.tsx";
import { aiAgentDocsTab } from "./ai-agent-docs.tsx";
import { documentationTab } from "./documentation.tsx";

export const TABS = [
  { id: "documentation", label: "Documentation" },
  { id: "ai-agent-docs", label: "AI Agent Docs" },
] as const;
export type TabId = (typeof TABS)[number]["id"];

const isTab = (value: string): value is TabId => TABS.some((t) => t.id === value);

/** The API tokens live on their own page (every user's, in the menu); the tab rConfig has here links there. */
const TOKENS_PAGE = "/tokens";

function Tabs(props: { current: TabId }) {
  return (
    <nav class="tabs" aria-label="REST API Access sections">
      <a href={TOKENS_PAGE} data-tab="api-token">
        API Token
      </a>
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

/** Settings -> REST API Access with one tab open. */
async function renderRestApiPage(c: Context<WebEnv>, status: ContentfulStatusCode, tab: TabId) {
  const body = tab === "documentation" ? documentationTab(c) : await aiAgentDocsTab(c);
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
    const tab = c.req.query("tab") ?? "documentation";
    // The old API Token tab: one page keeps the tokens, and an old bookmark lands on it.
    if (tab === "api-token") return c.redirect(TOKENS_PAGE, 301);
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

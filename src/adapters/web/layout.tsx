import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { WebSession } from "../../platform/auth/sessions.ts";
import { ASSET_VERSION } from "./assets.ts";
import type { WebEnv } from "./env.ts";
import type { AuthContext } from "../../platform/http/env.ts";
import { currentHref, isMenuGroup, menuFor, type MenuItem } from "./menu.ts";
import { vendoredHref } from "./vendor-assets.ts";

/** htmx without the inline <style> the CSP refuses, and without eval. */
const HTMX_CONFIG = JSON.stringify({ includeIndicatorStyles: false, allowEval: false, allowScriptTags: false });

/** Only our own stylesheet and script: no CDN, no inline code, nothing framed. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export function webHeaders(c: Context<WebEnv>): void {
  c.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
  c.header("X-Frame-Options", "DENY");
  c.header("Referrer-Policy", "same-origin");
  // Pages carry CSRF tokens and, once, a new token's value: nothing of them belongs in a cache.
  c.header("Cache-Control", "no-store");
}

/** A POST form carrying the session's CSRF token. */
export function CsrfForm(props: { action: string; csrf: string; class?: string; confirm?: string; children?: Child }) {
  return (
    <form method="post" action={props.action} class={props.class} data-confirm={props.confirm}>
      <input type="hidden" name="_csrf" value={props.csrf} />
      {props.children}
    </form>
  );
}

function MenuLink(props: { item: MenuItem; current?: string }) {
  const { item } = props;
  return (
    <a href={item.href} aria-current={item.href === props.current ? "page" : undefined}>
      {item.label}
    </a>
  );
}

/**
 * The menu's groups are `<details>` dropdowns: they open and close without JavaScript (netkeep.js only closes an
 * open one when another opens or the user clicks elsewhere). The group holding the current page is marked.
 */
function TopNav(props: { session: WebSession; auth?: AuthContext; path: string }) {
  const entries = menuFor(props.auth, props.session.isAdmin);
  const current = currentHref(entries, props.path);
  return (
    <nav class="topnav" aria-label="Main">
      {entries.map((e) =>
        isMenuGroup(e) ? (
          <details class="menu-group">
            <summary class={e.items.some((m) => m.href === current) ? "current" : undefined}>{e.label}</summary>
            <div class="menu-items">
              {e.items.map((m) => (
                <MenuLink item={m} current={current} />
              ))}
            </div>
          </details>
        ) : (
          <MenuLink item={e} current={current} />
        ),
      )}
    </nav>
  );
}

function Header(props: { appName: string; session?: WebSession; auth?: AuthContext; path: string }) {
  const s = props.session;
  return (
    <header class="topbar">
      <a class="brand" href="/">
        {props.appName}
      </a>
      {s && <TopNav session={s} auth={props.auth} path={props.path} />}
      {s && (
        <div class="whoami">
          <span>
            <a href="/account">{s.username}</a> <span class="muted">({s.roleName})</span>
          </span>
          <CsrfForm action="/logout" csrf={s.csrfToken} class="inline">
            <button type="submit" class="link-button">
              Log out
            </button>
          </CsrfForm>
        </div>
      )}
    </header>
  );
}

/** `charts`: the page draws uPlot charts (elements with data-chart), so it loads the library. */
export type PageProps = { title: string; session?: WebSession; charts?: boolean; children?: Child };

/** Renders a whole HTML document with the security headers every web page carries. */
export function renderPage(c: Context<WebEnv>, status: ContentfulStatusCode, props: PageProps) {
  webHeaders(c);
  const appName = c.var.services.config.appName;
  const page = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · ${appName}`}</title>
        <meta name="htmx-config" content={HTMX_CONFIG} />
        <link rel="stylesheet" href={`/assets/netkeep.css?v=${ASSET_VERSION}`} />
        {props.charts && <link rel="stylesheet" href={vendoredHref("uplot.min.css")} />}
        <script src={vendoredHref("htmx.min.js")} defer></script>
        {props.charts && <script src={vendoredHref("uplot.min.js")} defer></script>}
        <script src={`/assets/netkeep.js?v=${ASSET_VERSION}`} defer></script>
      </head>
      <body>
        <Header
          appName={appName}
          session={props.session}
          auth={(c.var as { auth?: AuthContext }).auth}
          path={c.req.path}
        />
        <main>{props.children}</main>
      </body>
    </html>
  );
  return c.html(`<!DOCTYPE html>${page}`, status);
}

/** A refusal or failure as a page a person can act on: what happened and where to go next. */
export function renderProblem(
  c: Context<WebEnv>,
  status: ContentfulStatusCode,
  problem: { title: string; message: string; next?: { href: string; label: string } },
  session?: WebSession,
) {
  return renderPage(c, status, {
    title: problem.title,
    session,
    children: (
      <section class="card problem">
        <h1>{problem.title}</h1>
        <p>{problem.message}</p>
        {problem.next && (
          <p>
            <a class="button" href={problem.next.href}>
              {problem.next.label}
            </a>
          </p>
        )}
      </section>
    ),
  });
}

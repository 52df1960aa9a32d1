import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { CookieOptions } from "hono/utils/cookie";
import type { WebEnv } from "./env.ts";

export const SESSION_COOKIE = "netkeep_session";
/** Double-submit token of the login form, which has no session yet to tie a token to. */
export const LOGIN_CSRF_COOKIE = "netkeep_login_csrf";

/** Secure whenever the browser reached us over HTTPS, directly or behind a proxy at an https APP_URL. */
export function isSecureRequest(c: Context<WebEnv>): boolean {
  return new URL(c.req.url).protocol === "https:" || c.var.services.config.appUrl.startsWith("https:");
}

const flags = (c: Context<WebEnv>, path: string, sameSite: "Lax" | "Strict"): CookieOptions => ({
  path,
  httpOnly: true,
  sameSite,
  secure: isSecureRequest(c),
});

/**
 * No Max-Age: the browser drops the cookie when it closes, and the server ends the session after
 * SESSION_LIFETIME_MINUTES idle whatever the browser keeps. Lax so links into the app from elsewhere land
 * logged in; every state change is a POST with a CSRF token anyway.
 */
export const setSessionCookie = (c: Context<WebEnv>, value: string) =>
  setCookie(c, SESSION_COOKIE, value, flags(c, "/", "Lax"));
export const clearSessionCookie = (c: Context<WebEnv>) => deleteCookie(c, SESSION_COOKIE, flags(c, "/", "Lax"));
export const sessionCookie = (c: Context<WebEnv>) => getCookie(c, SESSION_COOKIE);

export const setLoginCsrfCookie = (c: Context<WebEnv>, value: string) =>
  setCookie(c, LOGIN_CSRF_COOKIE, value, flags(c, "/login", "Strict"));
export const loginCsrfCookie = (c: Context<WebEnv>) => getCookie(c, LOGIN_CSRF_COOKIE);

import { SessionError, type Channel } from "../session.ts";

export type TelnetTarget = { host: string; port: number; connectTimeoutMs: number };

/** Opens a Telnet connection and answers option negotiation; the login happens in the session (prompts). */
export async function openTelnet(target: TelnetTarget): Promise<Channel & { close(): void }> {
  throw new SessionError("error", `telnet to ${target.host}:${target.port} is not supported by this collector yet`);
}

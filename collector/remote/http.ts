import { request as httpRequest } from "node:http";
import { Agent, request as httpsRequest } from "node:https";
import { gzipSync } from "node:zlib";
import { COLLECTOR_CREDENTIAL_HEADER } from "../../src/runtime/collector-api/index.ts";

/** The server answered with a status the caller must act on (401: revoked; 409: a lease lost). */
export class ServerAnswer extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The server could not be reached (or did not answer in time): the call may be tried again later. */
export class Unreachable extends Error {}

export type ServerClient = {
  /** POSTs JSON (gzip-compressed when `compress`), answers the parsed `data` of a 2xx; throws ServerAnswer or Unreachable. */
  post<T>(path: string, body: unknown, options?: { compress?: boolean; timeoutMs?: number }): Promise<T>;
  setCredential(credential: string): void;
  close(): void;
};

/**
 * The remote collector's only way out: HTTPS to the API, verifying the server's certificate against the system's
 * CAs or `ca` (a private CA's PEM); plain HTTP only when the caller allowed it. No other address is ever called.
 */
export function serverClient(options: { server: string; ca?: string; allowHttp: boolean }): ServerClient {
  const base = new URL(options.server);
  if (base.protocol === "http:" && !options.allowHttp)
    throw new Error(`${options.server} is plain HTTP: use https://, or pass --allow-http to send results unencrypted`);
  if (base.protocol !== "http:" && base.protocol !== "https:")
    throw new Error(`${options.server} must be an http:// or https:// URL`);
  const agent =
    base.protocol === "https:" ? new Agent({ keepAlive: true, ca: options.ca, rejectUnauthorized: true }) : undefined;
  let credential: string | undefined;
  return {
    setCredential: (value) => void (credential = value),
    close: () => agent?.destroy(),
    post<T>(path: string, body: unknown, { compress = false, timeoutMs = 30_000 } = {}): Promise<T> {
      const json = Buffer.from(JSON.stringify(body));
      const payload = compress ? gzipSync(json) : json;
      const url = new URL(path, base);
      const send = url.protocol === "https:" ? httpsRequest : httpRequest;
      return new Promise<T>((resolve, reject) => {
        const req = send(
          url,
          {
            method: "POST",
            agent,
            timeout: timeoutMs,
            headers: {
              "content-type": "application/json",
              "content-length": payload.length,
              ...(compress ? { "content-encoding": "gzip" } : {}),
              ...(credential ? { [COLLECTOR_CREDENTIAL_HEADER]: credential } : {}),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("error", (err) => reject(new Unreachable(err.message)));
            res.on("end", () => {
              const text = Buffer.concat(chunks).toString("utf8");
              let parsed: { data?: T; message?: string } = {};
              try {
                parsed = text ? JSON.parse(text) : {};
              } catch {
                // A proxy's HTML page: treated as the server being away.
              }
              const status = res.statusCode ?? 0;
              if (status >= 200 && status < 300) resolve(parsed.data as T);
              else if (status >= 500 || status === 429 || !parsed.message)
                reject(new Unreachable(`the server answered ${status}`));
              else reject(new ServerAnswer(status, parsed.message));
            });
          },
        );
        req.on("timeout", () => req.destroy(new Error("no answer in time")));
        req.on("error", (err) => {
          const code = (err as NodeJS.ErrnoException).code ?? "";
          // A certificate the collector cannot verify is not the server being away: it must stop and say so.
          if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS/.test(code))
            reject(new ServerAnswer(495, `the server's certificate is not trusted (${code}); pass its CA with --ca`));
          else reject(new Unreachable(`${code || err.message}`));
        });
        req.end(payload);
      });
    },
  };
}

import type { Server } from "node:http";

/** The port could not be bound: said in one line, without a stack trace. */
export class ListenError extends Error {}

const WHY: Record<string, string> = {
  EADDRINUSE:
    "the address is already in use (another netkeep, or another program, is listening there; set PORT or HOST)",
  EACCES: "permission denied (ports below 1024 need privileges; set PORT)",
  EADDRNOTAVAIL: "this machine has no such address (set HOST)",
};

/** Binds `server` to host:port; rejects with a ListenError that names the address and what to change. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      const address = `${host.includes(":") ? `[${host}]` : host}:${port}`;
      reject(new ListenError(`cannot listen on ${address}: ${WHY[err.code ?? ""] ?? err.message}`));
    };
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
}

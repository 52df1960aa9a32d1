import type { Server } from "node:http";

/**
 * Stops `server` accepting connections and lets the requests in flight finish until `deadline` (epoch ms).
 * Keep-alive connections are closed as soon as they are idle, so a browser's open connection does not hold the
 * stop for its whole keep-alive time. Resolves true when every connection ended on its own, false when the
 * deadline came first and the remaining ones were cut.
 */
export function drainServer(server: Server, deadline: number): Promise<boolean> {
  return new Promise((resolve) => {
    // A connection busy when close() was called goes idle once its response is sent: close it then.
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const cut = setTimeout(
      () => {
        clearInterval(idle);
        server.closeAllConnections();
        resolve(false);
      },
      Math.max(0, deadline - Date.now()),
    );
    server.close(() => {
      clearInterval(idle);
      clearTimeout(cut);
      resolve(true);
    });
    server.closeIdleConnections();
  });
}

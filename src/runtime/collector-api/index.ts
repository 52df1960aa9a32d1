// What app.ts (which mounts the collectors' API) and the remote collector (which speaks its wire format) use of
// the server half of the collector protocol. Start-up code, not a domain module: it stores results with the
// collector's own functions (collector/store-download.ts), which no module may import.
export { createCollectorApi } from "./routes.ts";
export { COLLECTOR_CREDENTIAL_HEADER } from "./wire.ts";
export type { Collected, ResultUpload, WireJob } from "./wire.ts";

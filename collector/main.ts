/**
 * The collector process: device I/O lives here, apart from the API. This entry only holds its place until
 * the collector issue lands; it stays alive and exits cleanly on SIGTERM so the launcher's supervision works.
 */
const keepAlive = setInterval(() => {}, 1 << 30);
const stop = () => {
  clearInterval(keepAlive);
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
export {};

import { pathToFileURL } from "node:url";

/** Defined (as true) by the production build, scripts/build.js; undeclared when the source runs through tsx or vitest. */
declare const NETKEEP_BUILT: boolean | undefined;

/**
 * Another entry point's production bundle (`name` as scripts/build.js names it: collector, store-thread), beside
 * the one running, when this code runs from the bundles; undefined from source, where it runs through tsx.
 * `import.meta.dirname` is the bundle's own folder: the build rewrites only `import.meta.url` to source places.
 */
export function bundledEntry(name: string): URL | undefined {
  if (typeof NETKEEP_BUILT === "undefined" || !NETKEEP_BUILT) return undefined;
  return pathToFileURL(`${import.meta.dirname}/${name}.js`);
}

import { zoneDigestLabel } from "../../modules/configs/index.ts";

/** A site's digests as stored: labelled with its zone's key, so they are compared only with their own kind. */
export const siteDigestsOf = (zoneId: number, digests: Record<string, string> | undefined) =>
  digests && Object.fromEntries(Object.entries(digests).map(([command, d]) => [command, zoneDigestLabel(zoneId, d)]));

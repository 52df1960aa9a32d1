import { hashTokenValue, randomSecret } from "../../platform/auth/token-value.ts";

/**
 * A remote zone's enrollment key and a collector's credential are 256 random bits, kept only as SHA-256 hashes
 * (as API tokens are: nothing to brute-force). Prefixes tell them apart in a support ticket or a leaked log line.
 */
export const newEnrollmentKey = () => `nkz_${randomSecret()}`;
export const newCollectorCredential = () => `nkc_${randomSecret()}`;
export const hashSecret = hashTokenValue;

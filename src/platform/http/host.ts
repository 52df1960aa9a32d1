/** IPv4 dotted quad, IPv6 (with optional zone-free compression), or an RFC 1123 hostname. */
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HOSTNAME =
  /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

export function isIPv6(text: string): boolean {
  if (!/^[0-9A-Fa-f:.]+$/.test(text) || !text.includes(":")) return false;
  try {
    // The URL parser is a complete IPv6 parser available on every runtime.
    return new URL(`http://[${text}]/`).hostname.length > 2;
  } catch {
    return false;
  }
}

export const isIPv4 = (text: string) => IPV4.test(text);

/**
 * An address in the one form it is stored and compared in: IPv6 lower-case and compressed (`2001:DB8:0::1` is
 * `2001:db8::1`), so the same device typed two ways is found as one. IPv4 and names are kept as given.
 */
export const canonicalAddress = (text: string) =>
  isIPv6(text) ? new URL(`http://[${text}]/`).hostname.slice(1, -1) : text;

export function isHostAddress(text: string): boolean {
  if (isIPv4(text) || isIPv6(text)) return true;
  // All-numeric dotted names are malformed IPv4 addresses, not hostnames.
  return HOSTNAME.test(text) && !/^[\d.]+$/.test(text);
}

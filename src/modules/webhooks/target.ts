/**
 * Which addresses a webhook may be delivered to. Pure functions over address text, so the API (any runtime)
 * checks a URL's literal address when a subscription is saved, and the collector checks every address a name
 * resolves to, at the moment it connects (collector/webhook-delivery.ts): a name that resolves to a metadata
 * address is refused as surely as the address itself.
 */

type Range = { bytes: number[]; bits: number; what: string };

const v4 = (text: string): number[] | null => {
  const parts = text.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.map(Number);
};

/** The 16 bytes of an IPv6 address (with an embedded IPv4 tail, a zone id, brackets), or null. */
function v6(text: string): number[] | null {
  let s = text.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!s.includes(":")) return null;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  let tailBytes: number[] = [];
  if (tail) {
    const b = v4(tail[1]!);
    if (!b) return null;
    tailBytes = b;
    s = s.slice(0, -tail[1]!.length) + "0:0";
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === "" ? [] : h.split(":"));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return null;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  if (all.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return null;
  const bytes = all.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 255]);
  if (tail) bytes.splice(12, 4, ...tailBytes);
  return bytes;
}

const range = (cidr: string, what: string): Range => {
  const [addr, bits] = cidr.split("/");
  const bytes = v4(addr!) ?? v6(addr!)!;
  return { bytes, bits: Number(bits), what };
};

const within = (bytes: number[], r: Range) => {
  if (bytes.length !== r.bytes.length) return false;
  for (let bit = 0; bit < r.bits; bit++) {
    const mask = 128 >> (bit % 8);
    if ((bytes[bit >> 3]! & mask) !== (r.bytes[bit >> 3]! & mask)) return false;
  }
  return true;
};

/** Never a webhook target: cloud metadata services, link-local, and addresses that are not one host. */
const ALWAYS_REFUSED: Range[] = [
  range("169.254.0.0/16", "a link-local address (cloud metadata services live at 169.254.169.254)"),
  range("fe80::/10", "a link-local address"),
  range("fd00:ec2::254/128", "the AWS metadata service"),
  range("100.100.100.200/32", "the Alibaba Cloud metadata service"),
  range("0.0.0.0/8", "an unspecified address"),
  range("::/128", "an unspecified address"),
  range("224.0.0.0/3", "a multicast or reserved address"),
  range("ff00::/8", "a multicast address"),
];

/** Refused only when the settings forbid private ranges (webhooks.allow_private_ranges: false). */
const PRIVATE: Range[] = [
  range("10.0.0.0/8", "a private address"),
  range("172.16.0.0/12", "a private address"),
  range("192.168.0.0/16", "a private address"),
  range("100.64.0.0/10", "a shared (carrier-grade NAT) address"),
  range("127.0.0.0/8", "a loopback address"),
  range("::1/128", "a loopback address"),
  range("fc00::/7", "a unique-local (private) address"),
];

/** Where an IPv6 address carries an IPv4 one, and which of its bytes hold it (RFC 4291, 2765, 6052, 8215, 3056, 4380). */
const EMBEDDINGS: {
  prefix: Range;
  at: number[][];
  xor?: number;
  unless?: (six: number[]) => boolean;
  places?: boolean;
}[] = [
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated, SIIT): a host's stack sends them to a.b.c.d.
  { prefix: range("::ffff:0:0/96", "mapped"), at: [[12, 13, 14, 15]] },
  { prefix: range("::ffff:0:0:0/96", "translated"), at: [[12, 13, 14, 15]] },
  // ::a.b.c.d, the old compatible form (not :: and ::1, which are themselves).
  {
    prefix: range("::/96", "compatible"),
    at: [[12, 13, 14, 15]],
    unless: (six) => six.slice(12, 15).every((b) => b === 0) && six[15]! <= 1,
  },
  // NAT64's well-known prefix, which a NAT64 gateway forwards to a.b.c.d.
  { prefix: range("64:ff9b::/96", "NAT64"), at: [[12, 13, 14, 15]] },
  // NAT64's local-use prefix: the operator picks the prefix length, so each of RFC 6052's places is judged
  // where the address fits it (byte 8 and the bytes after the place zero, as RFC 6052 requires).
  {
    prefix: range("64:ff9b:1::/48", "NAT64 local use"),
    at: [
      [6, 7, 9, 10],
      [7, 9, 10, 11],
      [9, 10, 11, 12],
      [12, 13, 14, 15],
    ],
    places: true,
  },
  // 6to4, relayed to aa.bb.cc.dd of 2002:aabb:ccdd::/48.
  { prefix: range("2002::/16", "6to4"), at: [[2, 3, 4, 5]] },
  // Teredo: its server's address, and its client's, stored inverted.
  { prefix: range("2001::/32", "Teredo"), at: [[4, 5, 6, 7]] },
  { prefix: range("2001::/32", "Teredo"), at: [[12, 13, 14, 15]], xor: 0xff },
];

/**
 * Every address this one reaches: itself, and each IPv4 address an IPv6 form of it carries, so an IPv4 address
 * written as IPv6 is judged as the IPv4 address it leads to (a blocked one refused whatever its spelling).
 */
function reached(address: string): number[][] | null {
  const four = v4(address);
  if (four) return [four];
  const six = v6(address);
  if (!six) return null;
  const out = [six];
  for (const e of EMBEDDINGS) {
    if (!within(six, e.prefix) || e.unless?.(six)) continue;
    for (const at of e.at) {
      const four = at.map((i) => six[i]! ^ (e.xor ?? 0));
      const fits = (i: number): boolean => at.includes(i) || (i !== 8 && i <= at.at(-1)!) || six[i] === 0;
      if (!e.places || (six.every((_, i) => i < 6 || fits(i)) && four.some((b) => b !== 0))) out.push(four);
    }
  }
  return out;
}

/** Whether text is an IP address literal (v4 or v6, brackets allowed). */
export const isIpLiteral = (text: string): boolean => v4(text) !== null || v6(text) !== null;

/** The range an address is in: ALWAYS_REFUSED, then PRIVATE; undefined for a public address. */
function rangeOf(bytes: number[]): Range | undefined {
  return ALWAYS_REFUSED.find((r) => within(bytes, r)) ?? PRIVATE.find((r) => within(bytes, r));
}

/** Whether an address (any of the addresses it reaches) is outside the public ranges: private, loopback, link-local... */
export function isNonPublicAddress(address: string): boolean {
  const all = reached(address);
  return !all || all.some((bytes) => rangeOf(bytes) !== undefined);
}

/** Why a webhook may not go to this address, or null when it may. */
export function refusedAddress(address: string, allowPrivate: boolean): string | null {
  const all = reached(address);
  if (!all) return `${address} is not an IP address`;
  for (const bytes of all) {
    const hit =
      ALWAYS_REFUSED.find((r) => within(bytes, r)) ??
      (allowPrivate ? undefined : PRIVATE.find((r) => within(bytes, r)));
    if (!hit) continue;
    const text = address.replace(/^\[|\]$/g, "");
    return `${bytes.length === 4 && !v4(text) ? `${text} (IPv4 ${bytes.join(".")})` : text} is ${hit.what}`;
  }
  return null;
}

/**
 * Why a URL cannot be a webhook target, or null: only http and https, no user name or password in it (the
 * signature authenticates), and a literal address must pass refusedAddress. A name is judged when it resolves.
 */
export function refusedUrl(text: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an absolute http:// or https:// URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return `must use http or https, not ${url.protocol.replace(/:$/, "")}`;
  if (url.username || url.password)
    return "must not carry a user name or password (receivers check the signature instead)";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return isIpLiteral(host) ? refusedAddress(host, allowPrivate) : null;
}

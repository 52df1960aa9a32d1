import { lookup } from "node:dns/promises";
import { isIP, isIPv4 } from "node:net";

/**
 * What a discovery is asked to scan: addresses, host names, ranges ("192.0.2.10-192.0.2.40", or
 * "192.0.2.10-40") and IPv4 subnets ("192.0.2.0/24", at most a /20), expanded to the addresses they name. Pure
 * but for host names, which are resolved (one address each). A target that names nothing scannable is refused
 * with the reason, by its index.
 */

/** The widest subnet one target may be, and the most addresses one request or preset expands to. */
export const MAX_PREFIX = 20;
export const MAX_ADDRESSES = 4096;

const toInt = (ip: string) => ip.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
const toIp = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");

export type Expanded = { addresses: string[]; errors: Record<string, string[]> };

/** Expands `targets`; errors are keyed `addresses.<index>` (or `field.<index>`) as the 422 names them. */
export async function expandTargets(targets: string[], field = "addresses"): Promise<Expanded> {
  const errors: Record<string, string[]> = {};
  const seen = new Set<string>();
  const addresses: string[] = [];
  const add = (ip: string) => {
    if (!seen.has(ip)) seen.add(ip), addresses.push(ip);
  };
  for (const [i, raw] of targets.entries()) {
    const target = raw.trim();
    const fail = (why: string) => (errors[`${field}.${i}`] = [why]);
    const cidr = /^(\d{1,3}(?:\.\d{1,3}){3})\/(\d{1,2})$/.exec(target);
    const range = /^(\d{1,3}(?:\.\d{1,3}){3})-(\d{1,3}(?:\.\d{1,3}){3}|\d{1,3})$/.exec(target);
    if (cidr) {
      const [, base, bits] = cidr;
      const prefix = Number(bits);
      if (!isIPv4(base!) || prefix > 32) fail(`${target} is not an IPv4 subnet`);
      else if (prefix < MAX_PREFIX)
        fail(`${target} is a /${prefix}: a subnet may be at most a /${MAX_PREFIX} (4096 addresses); split it`);
      else {
        const size = 2 ** (32 - prefix);
        const first = Math.floor(toInt(base!) / size) * size;
        // A /31 and /32 are all hosts; wider subnets leave out the network and broadcast addresses.
        const [from, to] = size <= 2 ? [first, first + size - 1] : [first + 1, first + size - 2];
        for (let n = from; n <= to; n++) add(toIp(n));
      }
    } else if (range) {
      const [, start, endText] = range;
      const end = endText!.includes(".") ? endText! : start!.replace(/\d+$/, endText!);
      if (!isIPv4(start!) || !isIPv4(end)) fail(`${target} is not a range of IPv4 addresses`);
      else if (toInt(end) < toInt(start!)) fail(`${target} is reversed: its end comes before its start`);
      else if (toInt(end) - toInt(start!) + 1 > MAX_ADDRESSES)
        fail(`${target} holds ${toInt(end) - toInt(start!) + 1} addresses: a range may hold at most ${MAX_ADDRESSES}`);
      else for (let n = toInt(start!); n <= toInt(end); n++) add(toIp(n));
    } else if (isIP(target)) {
      add(target);
    } else if (/^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9-]{1,63})*\.?$/.test(target)) {
      try {
        // RFC 6761: no name under .invalid resolves, so none is asked of a resolver.
        if (/\.invalid\.?$/i.test(target)) throw new Error("reserved");
        add((await lookup(target)).address);
      } catch {
        fail(`${target} does not resolve to an address`);
      }
    } else {
      fail(
        `${target || "an empty target"} is not an address, host name, range (a.b.c.d-e.f.g.h) or subnet (a.b.c.d/nn)`,
      );
    }
    if (addresses.length > MAX_ADDRESSES) {
      errors[field] = [`the targets name more than ${MAX_ADDRESSES} addresses; scan them in parts`];
      break;
    }
  }
  return { addresses, errors };
}

import { lookup } from "node:dns/promises";
import { isIP, isIPv4 } from "node:net";
import { canonicalAddress } from "../../platform/http/host.ts";

/**
 * What a discovery is asked to scan: addresses, host names, ranges ("192.0.2.10-192.0.2.40", or
 * "192.0.2.10-40") and IPv4 subnets ("192.0.2.0/24", at most a /20), expanded to the addresses they name. Pure
 * but for host names, which are resolved (one address each, all at once, each within RESOLVE_TIMEOUT_MS). A
 * target that names nothing scannable is refused with the reason, by its index.
 */

/** The widest subnet one target may be, and the most addresses one request or preset expands to. */
export const MAX_PREFIX = 20;
export const MAX_ADDRESSES = 4096;
/** How long a host name may take to resolve: a resolver that never answers must not hold the request. */
export const RESOLVE_TIMEOUT_MS = 5_000;

const toInt = (ip: string) => ip.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
const toIp = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");

/** 0.0.0.0/8 ("this network": a connect to 0.0.0.0 reaches the scanner itself) and 224.0.0.0 up (multicast, reserved, broadcast). */
const FIRST_DEVICE_INT = 2 ** 24;
const LAST_DEVICE_INT = 224 * 2 ** 24 - 1;
const NOT_A_DEVICE = "0.0.0.0/8, multicast, reserved and broadcast addresses are not scanned";

/** Why an address is no device's, or undefined when it may be one. */
function notDeviceAddress(ip: string): string | undefined {
  if (isIPv4(ip)) {
    const n = toInt(ip);
    return n < FIRST_DEVICE_INT || n > LAST_DEVICE_INT ? NOT_A_DEVICE : undefined;
  }
  const lower = ip.toLowerCase();
  if (/^[0:]+$/.test(lower)) return "the unspecified address :: is not scanned";
  if (lower.startsWith("ff")) return "IPv6 multicast addresses are not scanned";
  return undefined;
}

export type Expanded = { addresses: string[]; errors: Record<string, string[]> };

export type ResolveOptions = {
  /** One address of a host name (the system resolver by default). */
  resolve?: (name: string) => Promise<string>;
  timeoutMs?: number;
};

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9-]{1,63})*\.?$/;

/** Each host name's address, or why it has none; all asked at once, none waited for past `timeoutMs`. */
function resolveAll(names: string[], options: ResolveOptions): Map<string, Promise<{ ip?: string; why?: string }>> {
  const resolve = options.resolve ?? (async (name: string) => (await lookup(name)).address);
  const timeoutMs = options.timeoutMs ?? RESOLVE_TIMEOUT_MS;
  const answers = new Map<string, Promise<{ ip?: string; why?: string }>>();
  for (const name of names) {
    if (answers.has(name)) continue;
    // RFC 6761: no name under .invalid resolves, so none is asked of a resolver.
    if (/\.invalid\.?$/i.test(name)) {
      answers.set(name, Promise.resolve({ why: `${name} does not resolve to an address` }));
      continue;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<{ why: string }>((done) => {
      timer = setTimeout(
        () => done({ why: `${name} did not resolve within ${timeoutMs / 1000} s; give its address instead` }),
        timeoutMs,
      );
      timer.unref?.();
    });
    const answer = resolve(name).then(
      (ip) => ({ ip }),
      () => ({ why: `${name} does not resolve to an address` }),
    );
    answers.set(
      name,
      Promise.race([answer, late]).finally(() => clearTimeout(timer)),
    );
  }
  return answers;
}

/** Expands `targets`; errors are keyed `addresses.<index>` (or `field.<index>`) as the 422 names them. */
export async function expandTargets(
  targets: string[],
  field = "addresses",
  options: ResolveOptions = {},
): Promise<Expanded> {
  const errors: Record<string, string[]> = {};
  const seen = new Set<string>();
  const addresses: string[] = [];
  const add = (ip: string) => {
    if (!seen.has(ip)) seen.add(ip), addresses.push(ip);
  };
  const trimmed = targets.map((raw) => raw.trim());
  const names = resolveAll(
    trimmed.filter((target) => !isIP(target) && !/^[\d./-]+$/.test(target) && HOST_NAME.test(target)),
    options,
  );
  for (const [i, target] of trimmed.entries()) {
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
        const outside = [from, to].map(toIp).find((ip) => notDeviceAddress(ip));
        if (outside) fail(`${target} includes ${outside}: ${NOT_A_DEVICE}`);
        else for (let n = from; n <= to; n++) add(toIp(n));
      }
    } else if (range) {
      const [, start, endText] = range;
      const end = endText!.includes(".") ? endText! : start!.replace(/\d+$/, endText!);
      if (!isIPv4(start!) || !isIPv4(end)) fail(`${target} is not a range of IPv4 addresses`);
      else if (toInt(end) < toInt(start!)) fail(`${target} is reversed: its end comes before its start`);
      else if (toInt(end) - toInt(start!) + 1 > MAX_ADDRESSES)
        fail(`${target} holds ${toInt(end) - toInt(start!) + 1} addresses: a range may hold at most ${MAX_ADDRESSES}`);
      else {
        // The blocks refused lie at both ends of the address space: a range reaches one only through an end.
        const outside = [start!, end].find((ip) => notDeviceAddress(ip));
        if (outside) fail(`${target} includes ${outside}: ${NOT_A_DEVICE}`);
        else for (let n = toInt(start!); n <= toInt(end); n++) add(toIp(n));
      }
    } else if (isIP(target)) {
      const why = notDeviceAddress(target);
      if (why) fail(`${target} is not a device address: ${why}`);
      else add(canonicalAddress(target));
    } else if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(target)) {
      fail(`${target} is not an IPv4 address: each of its four numbers must be 0-255`);
    } else if (names.has(target)) {
      const { ip, why } = await names.get(target)!;
      const notDevice = ip ? notDeviceAddress(ip) : undefined;
      if (why) fail(why);
      else if (notDevice) fail(`${target} resolves to ${ip}, which is not a device address: ${notDevice}`);
      else add(ip!);
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

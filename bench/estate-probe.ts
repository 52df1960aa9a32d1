import { join } from "node:path";
import { sql } from "drizzle-orm";
import { loadConfig } from "../src/kernel/config.ts";
import { openDatabase } from "../src/db/client.ts";
import { RUNNING } from "./estate-data.ts";
import { BENCH_PASSWORD, BENCH_USER } from "./estate-build.ts";

/** What the requests of bench/estate.ts are about, read from the estate before the service starts. */
export type Sample = {
  deviceId: number;
  oldId: number;
  latestId: number;
  tag: string;
  vendor: string;
  lastPage: number;
  /** A line of the device's latest configuration only it holds (an ACL entry), and one every device holds. */
  selective: string;
  broad: string;
  lastNight: string;
  weekBefore: string;
};

export async function sampleEstate(dir: string, appKey: string, base: number, days: number): Promise<Sample> {
  const config = loadConfig({ STORAGE_DIR: join(dir, "storage"), DATABASE_URL: "", APP_KEY: appKey, COLLECTOR: "off" });
  const { db, client } = await openDatabase(config.databaseUrl);
  // The device with the longest history: its first version is as old as the estate.
  const [busiest] = await db.all<{ deviceId: number; oldId: number; latestId: number }>(sql`
    select device_id as deviceId, min(id) as oldId, max(id) as latestId from configs where command = ${RUNNING}
    group by device_id order by count(*) desc, device_id limit 1`);
  const [{ n }] = (await db.all<{ n: number }>(sql`select count(*) as n from devices`)) as [{ n: number }];
  const [blob] = await db.all<{ hash: string }>(
    sql`select blob_hash as hash from configs where id = ${busiest!.latestId}`,
  );
  const { readBlob } = await import("../src/modules/configs/storage/blobs.ts");
  const text = await readBlob(db, blob!.hash);
  client.close();
  const day = 86_400_000;
  const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
  return {
    ...busiest!,
    tag: "critical",
    vendor: "Juniper",
    lastPage: Math.ceil(n / 25),
    selective: text
      .split("\n")
      .find((l) => / host 172\.16\.\d+\.\d+ eq/.test(l))!
      .trim()
      .replace(/^\d+ /, ""),
    broad: "snmp-server community",
    lastNight: iso(base + (days - 1) * day),
    weekBefore: iso(base + (days - 7) * day),
  };
}

export type Probe = { name: string; url: string; web?: boolean };

/** The requests a user makes, API and pages, against one estate. */
export function probes(s: Sample): Probe[] {
  const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
  return [
    { name: "device list (default)", url: "/api/v1/devices" },
    { name: "device list by tag", url: `/api/v1/devices?${q({ "filter[device_tags]": s.tag })}` },
    { name: "device list by vendor", url: `/api/v1/devices?${q({ "filter[device_vendor]": s.vendor })}` },
    { name: "device list by status", url: `/api/v1/devices?${q({ "filter[status]": "unreachable" })}` },
    { name: "device list sorted by name desc", url: "/api/v1/devices?sort=-device_name" },
    { name: "device list, last page", url: `/api/v1/devices?page=${s.lastPage}` },
    { name: "device list, per_page 500", url: "/api/v1/devices?per_page=500" },
    { name: "device", url: `/api/v1/devices/${s.deviceId}` },
    { name: "device's versions", url: `/api/v1/configs/all-by-deviceid/${s.deviceId}` },
    { name: "latest configuration", url: `/api/v1/configs/latest-by-deviceid/${s.deviceId}` },
    { name: "oldest version's text", url: `/api/v1/configs/${s.oldId}/content` },
    { name: "diff oldest..latest", url: `/api/v1/configs/diff?from=${s.oldId}&to=${s.latestId}` },
    { name: "changes, last night", url: `/api/v2/config-changes?${q({ "filter[date_from]": s.lastNight })}` },
    { name: "changes, last week", url: `/api/v2/config-changes?${q({ "filter[date_from]": s.weekBefore })}` },
    {
      name: "search selective, latest",
      url: `/api/v1/configs/search?${q({ q: s.selective, latest_only: "true" })}`,
    },
    {
      name: "search selective, history",
      url: `/api/v1/configs/search?${q({ q: s.selective, latest_only: "false" })}`,
    },
    { name: "search broad, latest", url: `/api/v1/configs/search?${q({ q: s.broad, latest_only: "true" })}` },
    { name: "search broad, history", url: `/api/v1/configs/search?${q({ q: s.broad, latest_only: "false" })}` },
    { name: "dashboard latest devices", url: "/api/v1/dashboard/latest-devices" },
    { name: "dashboard counts", url: "/api/v1/dashboard/counts" },
    { name: "dashboard failing devices", url: "/api/v1/dashboard/errored-devices" },
    { name: "device summary", url: "/api/v2/devices/summary" },
    { name: "compliance results", url: "/api/v1/policy-compliance" },
    { name: "compliance results, latest", url: `/api/v1/policy-compliance?${q({ "filter[latest]": "true" })}` },
    { name: "compliance trends", url: "/api/v1/policy-compliance/trends" },
    { name: "report backup success", url: "/api/v1/reports/backup-success" },
    { name: "report changes", url: "/api/v1/reports/changes" },
    { name: "report top changers", url: "/api/v1/reports/top-changers" },
    { name: "activity log", url: "/api/v1/activity-logs" },
    { name: "task runs", url: "/api/v1/task-runs" },
    { name: "v2 compliance export (csv)", url: "/api/v2/policy-compliance/export?format=csv" },
    { name: "/metrics", url: "/metrics" },
    { name: "page: dashboard", url: "/dashboard", web: true },
    { name: "page: devices", url: "/devices", web: true },
    { name: "page: devices by tag", url: `/devices?${q({ "filter[device_tags]": s.tag })}`, web: true },
    { name: "page: device", url: `/devices/${s.deviceId}`, web: true },
    { name: "page: configuration", url: `/configs/${s.latestId}`, web: true },
    { name: "page: diff oldest..latest", url: `/configs/diff?from=${s.oldId}&to=${s.latestId}`, web: true },
    { name: "page: changes", url: "/changes", web: true },
    { name: "page: search selective", url: `/search?${q({ q: s.selective })}`, web: true },
    { name: "page: compliance", url: "/compliance", web: true },
  ];
}

/** A browser session for the pages: the login form, as a person signs in. */
export async function webLogin(origin: string): Promise<string> {
  const cookies = new Map<string, string>();
  const keep = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const at = pair!.indexOf("=");
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
  };
  const jar = () => [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  const form = await fetch(`${origin}/login`);
  keep(form);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  if (!csrf) throw new Error("the login page has no _csrf field");
  const res = await fetch(`${origin}/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: jar(), origin },
    body: new URLSearchParams({ _csrf: csrf, username: BENCH_USER, password: BENCH_PASSWORD }).toString(),
  });
  keep(res);
  if (res.status !== 302 && res.status !== 303)
    throw new Error(`login answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return jar();
}

export type Latency = { p50: number; p99: number; status: number; bytes: number; n: number };

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};

/** `runs` requests one after another (after 2 untimed), body read whole: p50 and p99 as a client meets them. */
export async function timeProbe(
  origin: string,
  probe: Probe,
  headers: Record<string, string>,
  runs: number,
): Promise<Latency> {
  const times: number[] = [];
  let status = 0;
  let bytes = 0;
  // A slow request gets fewer runs (at least 3 timed, within about 10 s): one of 30 s would otherwise hold the
  // whole benchmark for ten minutes.
  const began = performance.now();
  for (let r = 0; r < runs + 2 && (r < 5 || performance.now() - began < 10_000); r++) {
    const t0 = performance.now();
    const res = await fetch(`${origin}${probe.url}`, { headers });
    const body = await res.arrayBuffer();
    if (r >= 2) times.push(performance.now() - t0);
    status = res.status;
    bytes = body.byteLength;
  }
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), status, bytes, n: times.length };
}

export { quantile };

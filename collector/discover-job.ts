import { eq } from "drizzle-orm";
import { discoveryCandidates, scanPresets } from "../src/db/schema/index.ts";
import { failureReason } from "../src/kernel/error-reason.ts";
import type { Job } from "../src/platform/jobs/queue.ts";
import { finishJob } from "../src/modules/tasks/index.ts";
import { adoptCandidates, devicesAt, type Candidate } from "../src/modules/discovery/index.ts";
import { expandTargets } from "../src/modules/discovery/index.ts";
import { sessionSettings } from "./collector-settings.ts";
import { discoverySets, findWorkingSet, type OpenPort } from "./credential-discovery.ts";
import type { DownloadDeps } from "./download.ts";
import { describeError } from "./errors.ts";
import { connectGate, probePort } from "./port-probe.ts";
import type { JobEnd } from "./store-download.ts";

/**
 * A discover job (POST /devices/discover, or a discovery_scan task's preset): each address that is not a device
 * yet is probed on the ports asked (a TCP connect, nothing sent); each that answers is logged in to with the
 * credential sets marked for discovery (or the preset's), SSH ports first, and detection reads its template,
 * vendor, model, OS version, serial and host name. Each becomes (or updates) a candidate, and with `adopt` a
 * device that is then backed up. Only the addresses the request or preset names are ever connected to, at most
 * `connects_per_second` connections a second and `max_connects` in all.
 */

/** Addresses probed at once. */
const PARALLEL_ADDRESSES = 16;
/** How long a probe waits for a TCP connection: a scan spends this on every silent address that drops packets. */
const PROBE_TIMEOUT_MS = 1500;

export type DiscoverParams = {
  addresses?: string[];
  ports?: number[];
  adopt?: boolean;
  cred_ids?: number[];
  preset_id?: number | null;
  connects_per_second?: number;
  max_connects?: number;
};

type AddressReport = {
  address: string;
  port: number;
  protocol: "ssh" | "telnet";
  candidate_id: number;
  credential_id: number | null;
  template_id: number | null;
  template: string | null;
  vendor: string | null;
  model: string | null;
  os_version: string | null;
  serial: string | null;
  hostname: string | null;
  problem: string | null;
  device_id: number | null;
};

export async function runDiscoverJob(deps: DownloadDeps, job: Job, signal: AbortSignal): Promise<JobEnd | undefined> {
  const started = Date.now();
  let end: JobEnd;
  let result: Record<string, unknown> = {};
  try {
    const params = { ...((job.params ?? {}) as DiscoverParams) };
    if (params.preset_id === null) throw new Error("the task's scan preset was deleted; choose another");
    if (params.preset_id !== undefined) {
      const [preset] = await deps.db.select().from(scanPresets).where(eq(scanPresets.id, params.preset_id));
      if (!preset) throw new Error(`scan preset ${params.preset_id} no longer exists`);
      const expanded = await expandTargets(preset.targets, "targets");
      const problem = Object.values(expanded.errors)[0]?.[0];
      if (problem) throw new Error(`scan preset ${preset.name}: ${problem}`);
      Object.assign(params, {
        addresses: expanded.addresses,
        ports: preset.ports,
        adopt: preset.adopt,
        cred_ids: preset.credIds,
        connects_per_second: preset.connectsPerSecond,
        max_connects: preset.maxConnects,
      });
    }
    const addresses = params.addresses ?? [];
    const ports = params.ports?.length ? params.ports : [22, 23];
    const gate = connectGate({ perSecond: params.connects_per_second ?? 50, total: params.max_connects ?? 20_000 });
    const sets = await discoverySets(deps.db, { credIds: params.cred_ids });
    const existing = await devicesAt(deps.db, addresses);
    const toScan = addresses.filter((a) => !existing.has(a));
    const { connectTimeoutMs } = await sessionSettings(deps);
    const probeTimeout = Math.min(PROBE_TIMEOUT_MS, connectTimeoutMs);

    const found: AddressReport[] = [];
    let silent = 0;
    /** Addresses the connection limit left unprobed (on some ports or all): neither answering nor silent. */
    let notProbed = 0;
    let next = 0;
    const worker = async () => {
      while (next < toScan.length && !signal.aborted) {
        const address = toScan[next++]!;
        const open: OpenPort[] = [];
        let probed = 0;
        for (const port of ports) {
          if (!(await gate.take())) break;
          probed++;
          const answer = await probePort(address, port, probeTimeout);
          if (answer) open.push(answer);
        }
        if (!open.length) {
          if (probed < ports.length) notProbed++;
          else silent++;
          continue;
        }
        found.push(await discoverAt(deps, address, open, sets, gate.take, signal, params.preset_id ?? null));
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_ADDRESSES, toScan.length) }, worker));
    if (signal.aborted) throw new Error(String(signal.reason ?? "the job was aborted"));

    let adopted = 0;
    if (params.adopt) {
      const ready = found.filter((f) => f.credential_id && f.template_id && f.device_id === null);
      const rows = await deps.db.transaction(async (tx) => {
        const candidates: Candidate[] = [];
        for (const f of ready)
          candidates.push(
            (await tx.select().from(discoveryCandidates).where(eq(discoveryCandidates.id, f.candidate_id)))[0]!,
          );
        return adoptCandidates(tx, candidates, { system: `discovery (job ${job.id})` }, deps.clock.now());
      });
      ready.forEach((f, i) => (f.device_id = rows[i]!));
      adopted = rows.length;
    }
    const stopped = gate.used >= (params.max_connects ?? 20_000) ? "the scan reached its connection limit" : null;
    result = {
      addresses: addresses.length,
      scanned: toScan.length,
      answered: found.length,
      silent,
      not_probed: notProbed,
      connects: gate.used,
      adopted,
      ...(stopped ? { stopped } : {}),
      found: found.sort((a, b) => a.address.localeCompare(b.address, "en", { numeric: true })),
      existing: [...existing.values()].map((d) => ({ address: d.ip, device_id: d.id, device_name: d.name })),
    };
    const ready = found.filter((f) => f.template_id && f.credential_id).length;
    end = {
      outcome: "success",
      retrying: false,
      message:
        `${found.length} of ${toScan.length} addresses answered, ${ready} identified` +
        (params.adopt ? `, ${adopted} adopted` : "") +
        (existing.size ? `; ${existing.size} already devices` : "") +
        (stopped ? `; ${stopped}${notProbed ? ` (${notProbed} addresses not probed)` : ""}` : ""),
    };
  } catch (err) {
    deps.logger.error("discovery failed", { job: job.id, error: describeError(err) });
    end = { outcome: "error", retrying: false, message: failureReason(err).slice(0, 500) };
  }
  const { recorded } = await finishJob(
    deps.db,
    job,
    deps.owner,
    { outcome: end.outcome, message: end.message, result: { duration_ms: Date.now() - started, ...result } },
    deps.clock.now(),
  );
  return recorded ? end : undefined;
}

/** Logs in to one answering address and records what it found as its candidate (one row per address). */
async function discoverAt(
  deps: DownloadDeps,
  address: string,
  open: OpenPort[],
  sets: Awaited<ReturnType<typeof discoverySets>>,
  gate: () => Promise<boolean>,
  signal: AbortSignal,
  presetId: number | null,
): Promise<AddressReport> {
  const search = await findWorkingSet(deps, { address, ports: open, sets, gate }, signal);
  const d = search.found?.detection;
  const port = search.found?.port ?? open[0]!;
  const problem = !search.found
    ? (search.problem ?? "no credential set logged in")
    : !d?.proposal
      ? d?.ranked.length
        ? `${d.ranked.map((r) => r.template).join(" and ")} fit equally`
        : "no built-in template recognised what the device printed"
      : null;
  const now = deps.clock.now();
  const values = {
    address,
    port: port.port,
    protocol: port.protocol,
    credId: search.found?.cred.id ?? null,
    templateId: d?.proposal?.template_id ?? null,
    vendor: d?.proposal?.vendor ?? null,
    model: d?.model ?? null,
    osVersion: d?.osVersion ?? null,
    serial: d?.serial ?? null,
    hostname: d?.hostname ?? null,
    problem,
    presetId,
    foundAt: now,
    updatedAt: now,
  };
  // A candidate already ignored stays ignored, and one adopted stays linked to its device.
  const [row] = await deps.db
    .insert(discoveryCandidates)
    .values({ ...values, createdAt: now })
    .onConflictDoUpdate({ target: discoveryCandidates.address, set: values })
    .returning();
  return {
    address,
    port: port.port,
    protocol: port.protocol,
    candidate_id: row!.id,
    credential_id: values.credId,
    template_id: values.templateId,
    template: d?.proposal?.template ?? null,
    vendor: values.vendor,
    model: values.model,
    os_version: values.osVersion,
    serial: values.serial,
    hostname: values.hostname,
    problem,
    device_id: row!.state === "adopted" ? row!.deviceId : null,
  };
}

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * What a remote collector keeps between runs, in its state directory (mode 0600): its enrollment (id, zone,
 * credential) and its private key. Device credentials are never written here: they arrive sealed in each job
 * and live only in memory.
 */
export type Enrollment = {
  server: string;
  collector_id: number;
  zone_id: number;
  credential: string;
  public_key: string;
  private_key: string;
};

const FILE = "enrollment.json";

export function readEnrollment(stateDir: string): Enrollment | undefined {
  const path = join(stateDir, FILE);
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as Enrollment) : undefined;
}

export function writeEnrollment(stateDir: string, enrollment: Enrollment): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const tmp = join(stateDir, `${FILE}.tmp`);
  writeFileSync(tmp, JSON.stringify(enrollment), { mode: 0o600 });
  renameSync(tmp, join(stateDir, FILE));
}

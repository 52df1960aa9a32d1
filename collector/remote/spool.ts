import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import type { ResultUpload } from "../../src/runtime/collector-api/index.ts";

/**
 * Finished results waiting for the server, on disk, in the order they finished: each a gzip file named by a
 * sequence number, written whole (temp file, then rename) so a crash never leaves half a result. Bounded in
 * bytes: past the bound the oldest results are dropped, each with `dropped` called (the collector logs it and
 * reports the count in its heartbeat). What is spooled survives a restart.
 */
export class Spool {
  private readonly dir: string;
  private next: number;
  droppedCount = 0;

  constructor(
    stateDir: string,
    private readonly maxBytes: number,
    private readonly dropped: (upload: Pick<ResultUpload, "job_id" | "upload_key">) => void,
  ) {
    this.dir = join(stateDir, "spool");
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const files = this.files();
    this.next = files.length ? Number(files[files.length - 1]!.slice(0, 12)) + 1 : 1;
  }

  private files(): string[] {
    return readdirSync(this.dir)
      .filter((f) => /^\d{12}\.json\.gz$/.test(f))
      .sort();
  }

  /** Bytes waiting. */
  bytes(): number {
    return this.files().reduce((sum, f) => sum + statSync(join(this.dir, f)).size, 0);
  }

  get length(): number {
    return this.files().length;
  }

  put(upload: ResultUpload): void {
    const name = `${String(this.next++).padStart(12, "0")}.json.gz`;
    const tmp = join(this.dir, `${name}.tmp`);
    writeFileSync(tmp, gzipSync(JSON.stringify(upload)), { mode: 0o600 });
    renameSync(tmp, join(this.dir, name));
    // Oldest first, and never the result just written while it is the only one: a bound smaller than one
    // result still delivers the newest.
    let files = this.files();
    let total = files.reduce((sum, f) => sum + statSync(join(this.dir, f)).size, 0);
    while (total > this.maxBytes && files.length > 1) {
      const oldest = files[0]!;
      const size = statSync(join(this.dir, oldest)).size;
      const gone = this.read(oldest);
      unlinkSync(join(this.dir, oldest));
      total -= size;
      files = files.slice(1);
      this.droppedCount++;
      if (gone) this.dropped({ job_id: gone.job_id, upload_key: gone.upload_key });
    }
  }

  private read(name: string): ResultUpload | undefined {
    try {
      return JSON.parse(gunzipSync(readFileSync(join(this.dir, name))).toString("utf8")) as ResultUpload;
    } catch {
      return undefined;
    }
  }

  /** The oldest result waiting, and what removes it once delivered. */
  peek(): { upload: ResultUpload | undefined; remove(): void } | undefined {
    const [oldest] = this.files();
    if (!oldest) return undefined;
    return { upload: this.read(oldest), remove: () => unlinkSync(join(this.dir, oldest)) };
  }
}

import type { Clock } from "../src/kernel/clock.ts";
import type { Logger } from "../src/kernel/logger.ts";
import type { Db } from "../src/db/client.ts";
import type { EventConsumer } from "../src/modules/events/index.ts";
import type { SecretBox } from "../src/platform/secrets/box.ts";
import type { CollectorSettings } from "./collector-settings.ts";
import type { SessionLimits } from "./session.ts";
import type { JobEnd, StoreRequest } from "./store-download.ts";

/** What the collector's job runners are given: the database, secrets, clock and logger, and how this collector runs. */
export type DownloadDeps = {
  db: Db;
  secrets: SecretBox;
  clock: Clock;
  logger: Logger;
  owner: string;
  /** Fixed session limits and connect timeout (tests, benchmarks); unset, they follow `settings`. */
  limits?: SessionLimits;
  connectTimeoutMs?: number;
  /** The settings' collector section (collectorSettingsCache); startWorker gives one, and without it the defaults apply. */
  settings?: () => Promise<CollectorSettings>;
  /** Where a finished session is stored: storeDownload on `db` unless given (collector/main.ts gives a thread's). */
  store?: (request: StoreRequest) => Promise<JobEnd | undefined>;
  /** Called when a download's session has ended and its output has a storing place (the worker starts another session then). */
  handedOver?: () => void;
  /** Where the database is and where its backups go, for backup_database jobs (absent: this collector refuses them). */
  backups?: { databaseUrl: string; storageDir: string };
  /** The event consumers this collector runs (collector/event-consumers.ts; absent: it refuses event jobs). */
  consumers?: readonly EventConsumer[];
  /** Each line of a download's session transcript as it happens, secrets masked (svc device:debug prints them). */
  onTranscriptLine?: (line: string) => void;
};

/**
 * Test helper for collector/parent-watch.test.ts, run as its own process with an IPC channel: answers "woken"
 * each time its parent sends the JOBS_QUEUED message. With `--linger`, a timer keeps it alive (as a collector's
 * work does); without, nothing does, and it must exit by itself although it listens.
 */
import { JOBS_QUEUED } from "../src/runtime/collector-process.ts";
import { onParentMessage } from "./parent-watch.ts";

onParentMessage(JOBS_QUEUED, () => process.send!("woken"));
if (process.argv.includes("--linger")) setTimeout(() => {}, 30_000);
process.send!("listening");

import type { JobOutcome } from "../src/db/schema/index.ts";
import type { Target } from "./collect.ts";
import type { SessionLimits } from "./session.ts";

/** What a push is asked to do and what it answers, over a shell session (push.ts) or NETCONF (netconf/push.ts). */
export type PushRequest = {
  lines: string[];
  rollbackLines?: string[];
  save: boolean /* false for dry checks: the discard steps run instead */;
};

export type PushOutcome = {
  status: "success" | "failed" | "error";
  outcome?: JobOutcome;
  failedLine?: { index: number; stage: "enter" | "line" | "save"; line: string; answer: string };
  rolledBack?: boolean;
  saved: boolean;
  transcript: string;
  message: string;
  fingerprint?: string;
};

export type PushConnection = { target: Target; limits: SessionLimits; connectTimeoutMs: number };

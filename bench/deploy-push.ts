import type { devices } from "../src/db/schema/index.ts";
import { parseTemplate } from "../src/modules/templates/template-schema.ts";
import { loadBuiltinTemplates } from "../src/runtime/builtin-templates.ts";
import { pushLines } from "../collector/push.ts";
import { DEFAULT_LIMITS } from "../collector/session.ts";

/**
 * The push side of bench/deploy.ts: collector/push.ts pushing a snippet with the built-in cisco-ios template to
 * each target, at most `concurrency` at once, in its own process so the parent measures its CPU and memory as it
 * does the bare ssh2 clients'. Says "ready" over IPC, takes one PushBenchPlan, answers with a PushBenchResult.
 */

export type PushBenchPlan = {
  targets: { port: number; username: string; password: string }[];
  concurrency: number;
  lines: string[];
  timeoutMs: number;
};
export type PushBenchResult = { elapsedMs: number; completed: number; failures: string[]; sessionMs: number[] };

async function run(plan: PushBenchPlan): Promise<PushBenchResult> {
  const parsed = parseTemplate(loadBuiltinTemplates().find((t) => t.key === "cisco-ios")!.code);
  if (!parsed.ok) throw new Error("the built-in cisco-ios template does not parse");
  const template = parsed.template;
  const failures: string[] = [];
  const sessionMs: number[] = [];
  let completed = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < plan.targets.length) {
      const target = plan.targets[next++]!;
      const began = performance.now();
      const signal = AbortSignal.timeout(plan.timeoutMs);
      const outcome = await pushLines(
        {
          target: {
            device: {
              ip: "127.0.0.1",
              portOverride: target.port,
              hostKeyFingerprint: null,
            } as typeof devices.$inferSelect,
            template,
            login: target,
          },
          limits: DEFAULT_LIMITS,
          connectTimeoutMs: plan.timeoutMs,
        },
        { lines: plan.lines, save: true },
        signal,
        { connected: false },
      );
      if (outcome.status === "success") {
        completed++;
        sessionMs.push(performance.now() - began);
      } else {
        failures.push(`port ${target.port}: ${outcome.message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(plan.concurrency, plan.targets.length) }, worker));
  return { elapsedMs: performance.now() - started, completed, failures, sessionMs };
}

process.once("message", async (plan: PushBenchPlan) => {
  const result = await run(plan);
  process.send!(result, () => process.exit(0));
});
process.send!("ready");

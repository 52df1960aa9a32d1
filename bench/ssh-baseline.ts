import { Client } from "ssh2";

/**
 * The bare-ssh2 limit bench/collect.ts and bench/deploy.ts compare the service with: the same exchanges (connect,
 * log in, open a shell on the same pseudo-terminal, send each template line and wait for the prompt after it, send
 * the teardown, close; one such session per entry of `sessions`, one after another, for each target) with the same
 * concurrency, and nothing else: no database, no cleaning, no storage. Runs in
 * its own process so the parent measures its CPU and memory as it does the collector's. Says "ready" over IPC,
 * takes one BaselinePlan, answers with a BaselineResult and exits.
 */

export type BaselinePlan = {
  targets: { port: number; username: string; password: string }[];
  concurrency: number;
  /** The template's prompt pattern, tested against the last line received, as the collector tests it. */
  prompt: string;
  lineEnding: string;
  /** Each target's sessions in order, each the lines it sends (setup lines, then commands): each waits for the prompt. */
  sessions: string[][];
  teardown: string[];
  configCommand: string;
  /** Per session. */
  timeoutMs: number;
};

export type BaselineResult = {
  elapsedMs: number;
  completed: number;
  failures: string[];
  configBytes: number;
  sessionMs: number[];
};

/** One session with a device; resolves with the size of the configuration command's answer. */
function session(
  target: BaselinePlan["targets"][number],
  plan: BaselinePlan,
  lines: string[],
  prompt: RegExp,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    let configBytes = 0;
    const timer = setTimeout(() => fail(new Error(`no end within ${plan.timeoutMs / 1000} s`)), plan.timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      client.end();
      reject(err);
    };
    client.on("error", fail);
    client.on("close", () => fail(new Error("the connection closed early")));
    client.on("ready", () => {
      client.shell({ term: "vt100", cols: 511, rows: 24 }, async (err, stream) => {
        if (err) return fail(err);
        const decoder = new TextDecoder();
        let received = "";
        let waiting: (() => void) | undefined;
        const check = () => {
          if (waiting && prompt.test(received.slice(received.lastIndexOf("\n") + 1))) {
            const wake = waiting;
            waiting = undefined;
            wake();
          }
        };
        stream.on("data", (chunk: Buffer) => {
          received += decoder.decode(chunk, { stream: true });
          check();
        });
        const expectPrompt = () =>
          new Promise<string>((done) => {
            waiting = () => {
              const text = received;
              received = "";
              done(text);
            };
            check();
          });
        await expectPrompt();
        for (const line of lines) {
          stream.write(line + plan.lineEnding);
          const answer = await expectPrompt();
          if (line === plan.configCommand) configBytes = answer.length;
        }
        for (const line of plan.teardown) stream.write(line + plan.lineEnding);
        clearTimeout(timer);
        client.removeAllListeners("close");
        client.end();
        resolve(configBytes);
      });
    });
    client.connect({
      host: "127.0.0.1",
      port: target.port,
      username: target.username,
      password: target.password,
      readyTimeout: plan.timeoutMs,
    });
  });
}

async function run(plan: BaselinePlan): Promise<BaselineResult> {
  const prompt = new RegExp(plan.prompt);
  const failures: string[] = [];
  let configBytes = 0;
  let completed = 0;
  const sessionMs: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < plan.targets.length) {
      const target = plan.targets[next++]!;
      try {
        const began = performance.now();
        for (const lines of plan.sessions) {
          // Not `configBytes += await ...`: that reads the total before the await and loses the other workers' sums.
          const bytes = await session(target, plan, lines, prompt);
          configBytes += bytes;
        }
        sessionMs.push(performance.now() - began);
        completed++;
      } catch (err) {
        failures.push(`port ${target.port}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(plan.concurrency, plan.targets.length) }, worker));
  return { elapsedMs: performance.now() - started, completed, failures, configBytes, sessionMs };
}

process.once("message", async (plan: BaselinePlan) => {
  const result = await run(plan);
  process.send!(result, () => process.exit(0));
});
process.send!("ready");

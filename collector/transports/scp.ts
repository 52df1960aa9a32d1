import type { ClientChannel } from "ssh2";
import { SessionError } from "../session.ts";

/**
 * The receiving end of SCP ("sink"), for one file: the device runs `scp -f <path>` ("source") on an exec channel
 * and the two sides talk the old rcp protocol over it. The sink sends a zero byte when ready; the source answers
 * `C<mode> <size> <name>\n` (or `\x01`/`\x02` and a message: a warning or an error such as "no such file"); the
 * sink acknowledges with a zero byte; the source sends exactly `size` bytes and a zero byte; the sink acknowledges
 * that too and the source exits. Only what a configuration download needs: one regular file, no directories
 * (`D`), no times (`T`, sent only when the source runs with -p, which it does not).
 */

/** The header line of a file: mode, size and name. */
const FILE_HEADER = /^C[0-7]{4} (\d+) ([^\n/]+)$/;
/** Longer than any header line a source sends (a name of at most 255 bytes). */
const MAX_HEADER = 1024;

export type ScpLimits = { idleTimeoutMs: number; maxBytes: number };

/**
 * Runs the sink side on `stream`, the exec channel of `scp -f <path>` that the caller opened, and resolves with
 * the file's bytes. Fails with a SessionError when the device refuses, stays silent for `idleTimeoutMs`, sends a
 * file larger than `maxBytes` or breaks the protocol; the channel is closed on every failure.
 */
export function receiveScpFile(stream: ClientChannel, path: string, limits: ScpLimits): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let state: "header" | "body" | "status" | "done" = "header";
    let pending: Buffer = Buffer.alloc(0);
    let size = 0;
    const body: Buffer[] = [];
    let received = 0;
    let stderr = "";
    let timer: ReturnType<typeof setTimeout>;

    const finish = (error?: SessionError) => {
      if (state === "done") return;
      state = "done";
      clearTimeout(timer);
      if (error) {
        stream.close();
        reject(error);
      } else {
        resolve(Buffer.concat(body, size));
      }
    };
    const fail = (message: string) =>
      finish(
        new SessionError(
          "error",
          `SCP of '${path}': ${message}`,
          stderr
            .split("\n")
            .filter((l) => l.trim())
            .slice(-10),
        ),
      );
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(
        () =>
          finish(new SessionError("timeout", `SCP of '${path}' produced nothing for ${limits.idleTimeoutMs / 1000} s`)),
        limits.idleTimeoutMs,
      );
    };
    const ack = () => void stream.write(Buffer.from([0]));

    const consume = () => {
      while (state !== "done" && pending.length) {
        if (state === "header") {
          const first = pending[0]!;
          const end = pending.indexOf(0x0a);
          if (end < 0) {
            if (pending.length > MAX_HEADER) return fail("the device sent a header line that never ends");
            return;
          }
          const line = pending.subarray(first === 1 || first === 2 ? 1 : 0, end).toString("utf8");
          pending = pending.subarray(end + 1);
          // \x01 is a warning and \x02 a fatal error; either way no file follows (OpenSSH's sink gives up on both).
          if (first === 1 || first === 2) return fail(line.trim() || "the device refused");
          if (line.startsWith("D")) return fail("it is a directory");
          const header = FILE_HEADER.exec(line);
          if (!header) return fail(`the device answered '${line.slice(0, 80)}', not a file header`);
          size = Number(header[1]);
          if (size > limits.maxBytes)
            return fail(`the file is ${size} bytes, more than the output limit of ${limits.maxBytes} bytes`);
          state = "body";
          ack();
        } else if (state === "body") {
          const take = pending.subarray(0, size - received);
          body.push(take);
          received += take.length;
          pending = pending.subarray(take.length);
          if (received === size) state = "status";
        } else {
          const status = pending[0]!;
          pending = pending.subarray(1);
          if (status !== 0)
            return fail(
              `the device ended the transfer with an error: ${pending.toString("utf8").trim() || `status ${status}`}`,
            );
          ack();
          return finish();
        }
      }
    };

    arm();
    stream.on("data", (chunk: Buffer) => {
      if (state === "done") return;
      arm();
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      consume();
    });
    stream.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 65_536) stderr += chunk.toString("utf8");
      arm();
    });
    stream.on("close", () => {
      if (state === "body" || state === "status") fail(`the connection closed after ${received} of ${size} bytes`);
      else
        fail(
          stderr
            .split("\n")
            .find((l) => l.trim())
            ?.trim()
            .slice(0, 200) ?? "the device closed the channel without sending the file",
        );
    });
    ack();
  });
}

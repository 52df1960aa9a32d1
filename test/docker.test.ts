import { execFileSync, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "./helpers/process.ts";
import { until } from "./helpers/until.ts";

/**
 * The Dockerfile, built and run where a container engine answers (`docker info`): the image serves /healthz,
 * runs as a non-root user, keeps its data under the /data volume, and stops cleanly (exit 0) on `docker stop`.
 * Without an engine it is skipped, visibly, here and in CI alike: .ci/run installs none, so CI runs it only on
 * a runner that brings its own engine, and there a broken image fails the suite.
 */
const root = fileURLToPath(new URL("..", import.meta.url));
const engine = spawnSync("docker", ["info", "--format", "{{.ServerVersion}}"], { encoding: "utf8", timeout: 10_000 });
const noEngine =
  engine.status !== 0
    ? `no container engine (docker info: ${(engine.stderr || engine.error?.message || "failed").trim().split("\n").at(-1)})`
    : undefined;

const docker = (...args: string[]) =>
  execFileSync("docker", args, {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 600_000,
  }).trim();

describe("the Dockerfile", () => {
  it("builds and runs on a Node LTS line still supported, one the package's engines field allows", () => {
    const bases = [...readFileSync(`${root}Dockerfile`, "utf8").matchAll(/^FROM node:(\d+)\S*/gm)].map((m) =>
      Number(m[1]),
    );
    expect(bases.length).toBe(2);
    // Even majors are Node's LTS lines; 20 reached its end of life in April 2026.
    for (const major of bases) expect(major % 2 === 0 && major >= 22, `node:${major}`).toBe(true);
    const engines = JSON.parse(readFileSync(`${root}package.json`, "utf8")).engines.node as string;
    expect(Number(/>=\s*(\d+)/.exec(engines)![1])).toBeLessThanOrEqual(Math.min(...bases));
  });
});

if (noEngine) {
  console.warn(`\n[docker.test.ts] SKIPPED: ${noEngine}\n`);
  it.skip(`builds and runs the image (skipped: ${noEngine})`, () => {});
} else {
  describe("the Docker image", () => {
    const tag = `netkeep-test:${randomUUID().slice(0, 8)}`;
    const name = `netkeep-test-${randomUUID().slice(0, 8)}`;
    afterAll(() => {
      spawnSync("docker", ["rm", "-f", name]);
      spawnSync("docker", ["rmi", "-f", tag]);
    });

    it("builds, serves /healthz as a non-root user with its data in /data, and exits 0 on docker stop", {
      timeout: 900_000,
    }, async () => {
      docker("build", "-t", tag, ".");
      const port = await freePort();
      docker(
        "run",
        "-d",
        "--name",
        name,
        "-p",
        `127.0.0.1:${port}:3000`,
        "-e",
        "ADMIN_PASSWORD=docker-test-password",
        tag,
      );
      const status = await until(
        "the container to answer /healthz",
        () =>
          fetch(`http://127.0.0.1:${port}/healthz`).then(
            (r) => r.status,
            () => 0,
          ),
        (s) => s === 200,
        { tries: 120, everyMs: 500 },
      ).catch(() => 0);
      expect(status, docker("logs", name)).toBe(200);
      expect(docker("exec", name, "id", "-u")).not.toBe("0");
      expect(docker("exec", name, "ls", "/data")).toContain("netkeep.db");
      expect(docker("inspect", "-f", "{{json .Config.Volumes}}", name)).toContain("/data");
      docker("stop", "-t", "30", name);
      expect(docker("inspect", "-f", "{{.State.ExitCode}}", name), docker("logs", name)).toBe("0");
    });
  });
}

import type { TestProject } from "vitest/node";
import { API_VERSIONS, openApiDocument } from "../../src/adapters/api/versions.ts";

/** Builds the API descriptions once per run for the contract check (contract.ts) in every test worker. */
export default function setup(project: TestProject): void {
  project.provide(
    "apiDocuments",
    Object.fromEntries(API_VERSIONS.map((v) => [v, openApiDocument(v, "http://netkeep.test")])) as never,
  );
}

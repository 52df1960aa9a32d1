import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import type { ApiVersion } from "../../adapters/api/versions.ts";
import { renderApiMarkdown } from "../../adapters/docs/markdown.ts";
import { asOpenApiDocument, OpenApiDocumentError, type OpenApiDocument } from "../../adapters/docs/openapi.ts";
import { apiDocsFiles } from "../../adapters/docs/paths.ts";
import { CliError, defineCommand } from "../command.ts";

/** Replaces a file in one step: readers see the old bytes or the new ones, never a half-written file. */
function writeAtomically(path: string, text: string): void {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    const fd = openSync(temp, "w");
    try {
      writeFileSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

const rebuildHint = "run without --no-generate to rebuild it";

function readCachedDocument(path: string, version: ApiVersion): OpenApiDocument {
  if (!existsSync(path)) throw new CliError(`no cached extraction at ${path}; run without --no-generate to create it`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw new CliError(`${path} is not valid JSON; ${rebuildHint}`);
  }
  try {
    return asOpenApiDocument(parsed, version);
  } catch (err) {
    if (err instanceof OpenApiDocumentError) throw new CliError(`${path} ${err.message}; ${rebuildHint}`);
    throw err;
  }
}

export const apiDocsBuildCommand = defineCommand({
  summary:
    "Write the Markdown description of each API version to STORAGE_DIR/app/api-docs/v{N}/docs.md (no database, no network)",
  options: {
    "api-version": {
      type: "string",
      placeholder: "all|v1|v2",
      required: true,
      npmConfig: true,
      description: "which version to build; each is built on its own",
    },
    "no-generate": {
      type: "boolean",
      description:
        "re-render the Markdown from the cached extraction (openapi.json beside it) instead of extracting again",
    },
  },
  database: false,
  async run(flags, { config, io }) {
    // The route table pulls in every module; load it only for this command, not for every `svc` start.
    const { API_VERSIONS, openApiDocument } = await import("../../adapters/api/versions.ts");
    const choice = flags["api-version"];
    const versions = choice === "all" ? [...API_VERSIONS] : API_VERSIONS.filter((v) => v === choice);
    if (!versions.length)
      throw new CliError(`--api-version must be all, ${API_VERSIONS.join(" or ")}, not '${choice}'`);
    const generate = !flags["no-generate"];

    const failures: string[] = [];
    for (const version of versions) {
      const files = apiDocsFiles(config.storageDir, version);
      try {
        // A fresh extraction is rendered from its JSON text, exactly as --no-generate later reads it back.
        const extracted = generate
          ? `${JSON.stringify(openApiDocument(version, config.appUrl, config.appName), null, 2)}\n`
          : undefined;
        const document = extracted
          ? asOpenApiDocument(JSON.parse(extracted), version)
          : readCachedDocument(files.openapi, version);
        // Render before writing anything, so a version that cannot be rendered leaves its files as they were.
        const markdown = renderApiMarkdown(document, version);
        mkdirSync(files.dir, { recursive: true });
        if (extracted) writeAtomically(files.openapi, extracted);
        writeAtomically(files.markdown, markdown);
        const endpoints = markdown.split("\n").filter((line) => line.startsWith("### ")).length;
        io.print(
          `${version}: ${generate ? "wrote" : "re-rendered"} ${files.markdown} (${endpoints} endpoints, ${new TextEncoder().encode(markdown).length} bytes)${generate ? ` and ${files.openapi}` : " from the cached extraction"}`,
        );
      } catch (err) {
        failures.push(`${version}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (failures.length) throw new CliError(`api-docs:build failed for ${failures.join("; ")}`);
  },
});

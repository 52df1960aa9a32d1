import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { setToTree, treeToSet } from "./config-forms.ts";

/**
 * The real device configurations in ../shared/fixtures/configs (its README says where they come from), by the
 * built-in template a user would pick for each: `<template key>/<file>`. CONFIG_FIXTURES names another folder.
 */
export function findConfigFixturesDir(): string | undefined {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const candidates = [process.env.CONFIG_FIXTURES, resolve(root, "../shared/fixtures/configs")].filter(
    (d): d is string => !!d,
  );
  return candidates.find((dir) => existsSync(join(dir, "README.md")));
}

export type ConfigFixture = {
  family: string;
  file: string;
  /** "as kept" (the file itself), or the other form of a Junos or PAN-OS file, made from it (config-forms.ts). */
  form: "as kept" | "set" | "hierarchical";
  text: string;
};

const isSetForm = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim() && !l.startsWith("#"))
    .every((l) => l.startsWith("set "));

/** Every configuration of the folder, plus the other form of each Junos and PAN-OS one. */
export function configFixtures(dir: string): ConfigFixture[] {
  const out: ConfigFixture[] = [];
  for (const family of readdirSync(dir)
    .filter((f) => !f.includes("."))
    .sort()) {
    for (const file of readdirSync(join(dir, family)).sort()) {
      const text = readFileSync(join(dir, family, file), "utf8").replace(/\r\n?/g, "\n");
      out.push({ family, file, form: "as kept", text });
      if (family === "juniper-junos" || family === "paloalto-panos") {
        const lines = text.split("\n");
        out.push(
          isSetForm(text)
            ? { family, file, form: "hierarchical", text: setToTree(lines).join("\n") + "\n" }
            : { family, file, form: "set", text: treeToSet(lines).join("\n") + "\n" },
        );
      }
    }
  }
  return out;
}

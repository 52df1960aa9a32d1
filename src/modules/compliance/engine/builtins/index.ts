/**
 * The built-in baseline hardening policies, one definition file each beside this one (rConfig format, so they
 * can be copied into rConfig or edited as a user's policy), listed with their names in policies.yaml. Read once
 * when the module loads.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { parse } from "yaml";

export type BuiltinPolicy = {
  /** Stable identity across releases (the file name). */
  key: string;
  name: string;
  description: string;
  /** The vendor the policy is written for (its key is the built-in template it checks, whose `nesting` applies). */
  vendor: string;
  definition: string;
};

/** The list in policies.yaml: which policies ship, and what they are called and for. */
const PolicyList = z.array(
  z.strictObject({
    key: z.string().regex(/^[a-z0-9-]+$/),
    name: z.string(),
    vendor: z.string(),
    description: z.string(),
  }),
);

const POLICIES = PolicyList.parse(parse(readFileSync(new URL("./policies.yaml", import.meta.url), "utf8")));

export const BUILTIN_POLICIES: BuiltinPolicy[] = POLICIES.map((p) => ({
  ...p,
  definition: readFileSync(new URL(`./${p.key}.txt`, import.meta.url), "utf8"),
}));

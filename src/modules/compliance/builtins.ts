import { eq } from "drizzle-orm";
import { nameKey } from "../../db/name-key.ts";
import type { DbOrTx } from "../../db/client.ts";
import { policies } from "../../db/schema/index.ts";
import { sha256Hex } from "../../kernel/hashing.ts";
import { BUILTIN_POLICIES, type BuiltinPolicy } from "./engine/index.ts";

/**
 * Brings the built-in policies up to date, matched by key, as the built-in templates are: a release rewrites
 * their definition, description and vendor (a new revision, which the next evaluation records); users' policies
 * are never touched. A new built-in whose name a user's policy already has is named "<name> (built-in)". A
 * built-in a release no longer ships becomes a user's policy, so its assignments keep working.
 */
export async function seedBuiltinPolicies(
  tx: DbOrTx,
  now: Date,
  builtins: readonly BuiltinPolicy[] = BUILTIN_POLICIES,
): Promise<void> {
  const rows = await tx
    .select({
      id: policies.id,
      name: policies.name,
      builtinKey: policies.builtinKey,
      definitionHash: policies.definitionHash,
      description: policies.description,
      vendor: policies.vendor,
    })
    .from(policies);
  const byKey = new Map(rows.flatMap((r) => (r.builtinKey ? [[r.builtinKey, r] as const] : [])));
  const names = new Set(rows.map((r) => nameKey(r.name)));

  for (const p of builtins) {
    const definitionHash = await sha256Hex(p.definition);
    const row = byKey.get(p.key);
    if (row) {
      if (row.definitionHash !== definitionHash || row.description !== p.description || row.vendor !== p.vendor) {
        await tx
          .update(policies)
          .set({
            definition: p.definition,
            definitionHash,
            description: p.description,
            vendor: p.vendor,
            updatedAt: now,
          })
          .where(eq(policies.id, row.id));
      }
      continue;
    }
    let name = p.name;
    for (let n = 1; names.has(nameKey(name)); n++) name = `${p.name} (built-in${n === 1 ? "" : ` ${n}`})`;
    names.add(nameKey(name));
    // Another process migrating at the same moment may have inserted it: that row is just as good.
    await tx
      .insert(policies)
      .values({
        name,
        nameKey: nameKey(name),
        description: p.description,
        vendor: p.vendor,
        definition: p.definition,
        definitionHash,
        builtinKey: p.key,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing();
  }

  const shipped = new Set(builtins.map((p) => p.key));
  for (const row of byKey.values()) {
    if (!shipped.has(row.builtinKey!))
      await tx.update(policies).set({ builtinKey: null, updatedAt: now }).where(eq(policies.id, row.id));
  }
}

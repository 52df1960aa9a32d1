import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { categories, credentials, deviceProfiles, templates } from "../../db/schema/index.ts";
import type { DeviceOut } from "./schemas.ts";

type Named = typeof categories | typeof templates | typeof deviceProfiles;

const nameOf = async (db: DbOrTx, table: Named, id: number | null) =>
  id === null ? null : ((await db.select({ name: table.name }).from(table).where(eq(table.id, id)))[0]?.name ?? null);

/**
 * The names of what a device refers to by id (category, template, profile) and the credential set it logs in
 * with (name and username, never a secret): for showing a device the caller has already been given.
 */
export async function deviceReferences(
  db: DbOrTx,
  device: Pick<DeviceOut, "device_category_id" | "device_template_id" | "device_profile_id" | "device_cred_id">,
) {
  const [category, template, profile, credentialSet] = await Promise.all([
    nameOf(db, categories, device.device_category_id),
    nameOf(db, templates, device.device_template_id),
    nameOf(db, deviceProfiles, device.device_profile_id),
    device.device_cred_id
      ? db
          .select({ name: credentials.name, username: credentials.username })
          .from(credentials)
          .where(eq(credentials.id, device.device_cred_id))
          .then((rows) => rows[0] ?? null)
      : null,
  ]);
  return { category, template, profile, credentialSet };
}

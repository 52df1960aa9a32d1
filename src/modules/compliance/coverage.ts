import { and, eq, isNotNull, or, sql, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import {
  ASSIGNMENT_SCOPES,
  commandCategories,
  commands,
  devices,
  policyAssignments,
  templates,
  vendors,
} from "../../db/schema/index.ts";
import { parseTemplate } from "../templates/index.ts";
import { reachedBy } from "../devices/index.ts";
import { type ConfigFamily, nestingByVendor, templateNesting } from "./engine/index.ts";

type AssignmentRow = typeof policyAssignments.$inferSelect;

/** The condition on `devices` that selects what one assignment covers. */
export function coveredBy(a: Pick<AssignmentRow, "scope" | "deviceIds" | "categoryIds" | "tagIds">): SQL {
  return reachedBy(a.scope, {
    devices: sql`${JSON.stringify(a.deviceIds)}`,
    categories: sql`${JSON.stringify(a.categoryIds)}`,
    tags: sql`${JSON.stringify(a.tagIds)}`,
  });
}

/** The condition, on a query joining `devices` and `policy_assignments`, that the assignment covers the device. */
export const assignmentCoversDevice: SQL = or(
  ...ASSIGNMENT_SCOPES.map((scope) =>
    and(
      eq(policyAssignments.scope, scope),
      reachedBy(scope, {
        devices: policyAssignments.deviceIds,
        categories: policyAssignments.categoryIds,
        tags: policyAssignments.tagIds,
      }),
    ),
  ),
)!;

/** The condition on `policy_assignments` that the assignment covers this device. */
export const coversDevice = (deviceId: number): SQL =>
  sql`exists (select 1 from ${devices} where ${devices.id} = ${deviceId} and ${assignmentCoversDevice})`;

/** What evaluating a device needs to know about it: which command holds its configuration, and its hierarchy style. */
export type DeviceFacts = { id: number; name: string; configCommand: string; family: ConfigFamily };

/** A device with no template and no category commands runs nothing yet; its configuration would be this. */
export const FALLBACK_COMMAND = "show running-config";

/**
 * The facts of these devices (or of every device the condition selects). A device's configuration command is
 * its template's `config_command` when the device runs it, else the first command the device runs (its
 * category's commands, else its template's): in practice `show running-config`, which is also the answer for a
 * device that runs no command at all yet.
 */
export async function deviceFacts(db: DbOrTx, where: SQL | undefined): Promise<DeviceFacts[]> {
  const rows = await db
    .select({
      id: devices.id,
      name: devices.name,
      vendor: vendors.name,
      templateCode: templates.code,
      categoryCommands: sql<string>`(select json_group_array(c.command order by c.id) from ${commands} c
        join ${commandCategories} cc on cc.command_id = c.id where cc.category_id = ${devices.categoryId})`,
    })
    .from(devices)
    .leftJoin(templates, eq(templates.id, devices.templateId))
    .leftJoin(vendors, eq(vendors.id, devices.vendorId))
    .where(where);
  const parsed = new Map<string, ReturnType<typeof parseTemplate>>();
  const parse = (code: string) => {
    let p = parsed.get(code);
    if (!p) parsed.set(code, (p = parseTemplate(code)));
    return p.ok ? p.template : undefined;
  };
  /** Read once, and only when a device has no template that parses. */
  let byVendor: Map<string, ConfigFamily> | undefined;
  const vendorNesting = async (vendor: string | null): Promise<ConfigFamily> => {
    if (!vendor) return "indent";
    byVendor ??= nestingByVendor(
      (await db.select({ code: templates.code }).from(templates).where(isNotNull(templates.builtinKey))).flatMap(
        (t) => parse(t.code) ?? [],
      ),
    );
    return byVendor.get(vendor.toLowerCase()) ?? "indent";
  };
  const facts: DeviceFacts[] = [];
  for (const r of rows) {
    const template = r.templateCode === null ? undefined : parse(r.templateCode);
    const categoryCommands = JSON.parse(r.categoryCommands) as string[];
    const runs = categoryCommands.length ? categoryCommands : (template?.commands ?? []);
    const configCommand =
      template && runs.includes(template.config_command) ? template.config_command : (runs[0] ?? FALLBACK_COMMAND);
    // As its template says; a device without one nests as its vendor's templates do.
    const family = template ? templateNesting(template) : await vendorNesting(r.vendor);
    facts.push({ id: r.id, name: r.name, configCommand, family });
  }
  return facts;
}

/** The devices an assignment covers now (of those `within` selects, when given), with their facts. */
export const coveredDevices = (db: DbOrTx, a: AssignmentRow, within?: SQL) =>
  deviceFacts(db, and(coveredBy(a), within));

import { z } from "@hono/zod-openapi";
import { DEVICE_STATUSES } from "../../db/schema/index.ts";
import { isHostAddress } from "../../platform/http/host.ts";
import { freeText, singleLine, visibleName } from "../../platform/http/text.ts";

/** Tags one device may carry. */
export const MAX_DEVICE_TAGS = 100;

const refId = (what: string, zeroMeans?: string) =>
  z
    .number({ error: `must be the numeric id of a ${what}` })
    .int("must be a whole number")
    .min(zeroMeans ? 0 : 1, zeroMeans ? "must be 0 or a positive id" : "must be a positive id")
    .nullable()
    .optional()
    .openapi({
      description: `Id of a ${what}${zeroMeans ? `; 0 means ${zeroMeans}` : ""}`,
      example: zeroMeans ? 0 : 1,
    });

/** The names a custom attribute may have: API bodies, CSV columns and filters all check against this one. */
export const CUSTOM_KEY = /^[A-Za-z0-9_-]{1,64}$/;
export const CUSTOM_KEY_RULE = "custom attribute names are 1-64 letters, digits, _ or -";
const customValue = z.union([z.string().max(1000), z.number(), z.boolean(), z.null()]);

/** Fields a client writes. Secrets are accepted here and never appear in any response. */
export const DeviceInput = z
  .object({
    device_name: visibleName(
      singleLine(
        z
          .string()
          .min(5, "must be at least 5 characters")
          .max(255, "must be at most 255 characters")
          .regex(/^\S+$/, "must not contain whitespace"),
      ),
      5,
    ).openapi({
      description:
        "Unique name, compared case-insensitively; at least 5 characters as a person sees them (a letter with its accents counts once), no invisible characters",
      example: "core-rtr-01",
    }),
    device_ip: z
      .string()
      .max(255, "must be at most 255 characters")
      .refine(isHostAddress, "must be an IPv4 address, an IPv6 address or a hostname")
      // The refine is invisible to the document; the formats carry the same rule into it.
      .openapi({
        description:
          "Management address: IPv4, IPv6 (stored lower-case and compressed: 2001:DB8:0::A is 2001:db8::a) or hostname",
        example: "192.0.2.10",
        anyOf: [{ format: "ipv4" }, { format: "ipv6" }, { format: "hostname" }],
      }),
    device_vendor: singleLine(z.string().max(255, "must be at most 255 characters")).nullable().optional().openapi({
      description:
        "Vendor name, one of the known vendors. Required on create and replace, unless device_profile_id names a profile that has a vendor; a device's vendor cannot be cleared",
      example: "Cisco",
    }),
    device_model: singleLine(z.string().max(255, "must be at most 255 characters"))
      .optional()
      .openapi({ example: "C9300-48P" }),
    device_category_id: refId("category (command group)"),
    device_template_id: refId("connection template"),
    device_cred_id: refId("credential set", "the device's own device_username and device_password"),
    device_snippet_cred_id: refId("credential set used for snippet pushes", "reuse the primary credentials"),
    device_port_override: z
      .number()
      .int("must be a whole number")
      .min(1, "must be at least 1")
      .max(65535, "must be at most 65535")
      .nullable()
      .optional()
      .openapi({ description: "Port to connect to instead of the template's", example: 22 }),
    device_profile_id: refId("device profile whose defaults the device inherits"),
    zone_id: z.number().int("must be a whole number").positive("must be a zone id").optional().openapi({
      description: "The zone whose collectors reach the device (GET /zones); 1, the local zone, when left out",
      example: 1,
    }),
    device_tags: z
      .array(singleLine(z.string().min(1, "must not be empty").max(64, "must be at most 64 characters")))
      .max(MAX_DEVICE_TAGS, `must have at most ${MAX_DEVICE_TAGS} items`)
      .optional()
      .openapi({ description: "Tag names; unknown names are created", example: ["core", "ams"] }),
    device_username: singleLine(z.string().max(255))
      .optional()
      .openapi({ description: "Login user when device_cred_id is 0", example: "backup" }),
    device_password: z
      .string()
      .max(1024)
      .nullable()
      .optional()
      .openapi({ description: "Write-only; null clears it", example: "s3cret-pass" }),
    device_enable_password: z
      .string()
      .max(1024)
      .nullable()
      .optional()
      .openapi({ description: "Write-only; null clears it", example: "en4ble-pass" }),
    custom: z
      .record(z.string().regex(CUSTOM_KEY, "must be 1-64 letters, digits, _ or -"), customValue)
      .optional()
      // The document generator drops a record's key rule; propertyNames (JSON Schema, absent from the metadata
      // type but copied into the document as given) puts it back.
      .openapi({
        description: "Flat custom attributes, filterable as filter[custom.<key>]",
        example: { site: "ams", rack: "r12" },
        ...({ propertyNames: { pattern: CUSTOM_KEY.source } } as object),
      }),
    notes: freeText(z.string().max(10_000, "must be at most 10000 characters"))
      .optional()
      .openapi({ example: "Core router, row 3" }),
    enabled: z.boolean().optional().openapi({ description: "Disabled devices are skipped by backups", example: true }),
    device_discover_credentials: z.boolean({ error: "must be true or false" }).optional().openapi({
      description:
        "Find the credential set by trying the sets marked for discovery, and again when it stops working (docs/discovery.md); device_cred_id then holds the one that works",
      example: false,
    }),
  })
  // The service requires a vendor on create and replace unless a profile gives it (a check the schema cannot
  // make: the profile is looked up): the document says so, since device_vendor itself must stay optional here.
  .openapi("DeviceInput", { anyOf: [{ required: ["device_vendor"] }, { required: ["device_profile_id"] }] });

export const DevicePatch = DeviceInput.partial().openapi("DevicePatch");

export type DeviceInputT = z.infer<typeof DeviceInput>;
export type DevicePatchT = z.infer<typeof DevicePatch>;

export const Device = z
  .object({
    id: z.number().int(),
    device_name: z.string(),
    device_ip: z.string(),
    device_vendor: z.string().nullable(),
    device_vendor_id: z.number().int().nullable(),
    device_model: z.string(),
    device_category_id: z.number().int().nullable(),
    device_template_id: z.number().int().nullable(),
    device_cred_id: z.number().int(),
    device_snippet_cred_id: z.number().int(),
    device_port_override: z.number().int().nullable(),
    device_profile_id: z.number().int().nullable(),
    zone_id: z.number().int(),
    device_tags: z.array(z.string()),
    device_username: z.string(),
    has_password: z.boolean(),
    has_enable_password: z.boolean(),
    custom: z.record(z.string(), customValue),
    notes: z.string(),
    enabled: z.boolean(),
    status: z.enum(DEVICE_STATUSES),
    device_discover_credentials: z.boolean(),
    device_serial: z.string().nullable().openapi({ description: "Read by the last backup or detection" }),
    device_os_version: z.string().nullable().openapi({ description: "Read by the last backup or detection" }),
    device_hostname: z.string().nullable().openapi({
      description: "The host name the device gives (SNMP sysName or its prompt), read by the last detection",
    }),
    inventory_at: z.string().nullable().openapi({ description: "When the serial, OS version and host name were read" }),
    last_seen_at: z.string().nullable(),
    last_backup_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Device");

export type DeviceOut = z.infer<typeof Device>;
export const DEVICE_FIELDS = Object.keys(Device.shape) as (keyof DeviceOut)[];

const MAX_BULK = 1000;
const bulkArray = <T extends z.ZodType>(item: T) =>
  z.array(item).min(1, "must have at least 1 item").max(MAX_BULK, `must have at most ${MAX_BULK} items`);

export const BulkCreate = z.object({ devices: bulkArray(DeviceInput) }).openapi("DeviceBulkCreate");
export const BulkUpdate = z
  .object({ devices: bulkArray(DevicePatch.extend({ id: z.number().int().positive("must be a positive id") })) })
  .openapi("DeviceBulkUpdate");
export const BulkIds = z
  .object({ ids: bulkArray(z.number().int().positive("must be a positive id")).openapi({ example: [1, 2, 3] }) })
  .openapi("DeviceIds");

export const DeviceSummary = z
  .object({
    total: z.number().int(),
    up: z.number().int(),
    unreachable: z.number().int(),
    unknown: z.number().int(),
    disabled: z.number().int(),
    never_backed_up: z.number().int(),
    last_backup_at: z.string().nullable(),
  })
  .openapi("DeviceSummary");

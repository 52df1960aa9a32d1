import { z, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { deviceScopeCondition } from "../../platform/auth/scope.ts";
import { devices } from "../../db/schema/index.ts";
import type { Db } from "../../db/client.ts";
import type { AppEnv, AuthContext } from "../../platform/http/env.ts";
import { ApiError } from "../../platform/http/errors.ts";
import { apiRoute, jsonResponse, pathIds } from "../../platform/http/route.ts";
import { recordActivity } from "../../platform/audit/record.ts";

/** OpenSSH's notation, as `ssh-keygen -lf` and the collector's host_key_changed message print it. */
const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/;

const HostKeyResetInput = z
  .object({
    fingerprint: z
      .string()
      .trim()
      .regex(FINGERPRINT, "must be an OpenSSH SHA-256 fingerprint: SHA256: followed by 43 base64 characters")
      .optional()
      .openapi({
        description: "Pin this key instead of trusting the next one the device presents",
        example: "SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU",
      }),
  })
  .openapi("HostKeyResetInput");

const HostKey = z
  .object({
    device_id: z.number().int(),
    host_key_fingerprint: z
      .string()
      .nullable()
      .openapi({ description: "The pinned fingerprint; null until the next connection pins the key it sees" }),
    previous_fingerprint: z.string().nullable().openapi({ description: "What was pinned before this request" }),
  })
  .openapi("DeviceHostKey");

export const resetHostKeyRoute = apiRoute({
  method: "post",
  path: "/devices/{id}/host-key/reset",
  operationId: "resetDeviceHostKey",
  tag: "Devices",
  ability: "devices.write",
  summary: "Accept a device's new SSH host key",
  description:
    "The collector pins a device's SSH host key on the first successful download and fails later downloads with " +
    "host_key_changed when the device presents another key (the job's message names both fingerprints). After checking " +
    "that the change is expected (a replaced device, a regenerated key), call this. Without a body the pinned key is " +
    'forgotten and the next connection pins whatever key the device presents; with {"fingerprint": "SHA256:..."} ' +
    "that key is pinned now, so only it is accepted (safer: compare it with `ssh-keygen -lf` on the device first).",
  request: {
    params: pathIds("id"),
    body: { required: false, content: { "application/json": { schema: HostKeyResetInput } } },
  },
  responses: { 200: jsonResponse(z.object({ data: HostKey }), "The device's host key pin after the reset") },
});

/**
 * Forgets (fingerprint null) or pins a device's SSH host key, for a device in the caller's scope (404 otherwise);
 * recorded even when nothing changed: someone chose to trust this device's key, and when matters.
 */
export async function resetHostKey(db: Db, auth: AuthContext, id: number, fingerprint: string | null, now: Date) {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ fingerprint: devices.hostKeyFingerprint })
      .from(devices)
      .where(and(eq(devices.id, id), deviceScopeCondition(auth.scope)));
    if (!row) throw ApiError.notFound(`Device ${id}`);
    await tx.update(devices).set({ hostKeyFingerprint: fingerprint, updatedAt: now }).where(eq(devices.id, id));
    await recordActivity(
      tx,
      auth,
      {
        action: "device.host_key_reset",
        subjectType: "device",
        subjectId: id,
        before: { host_key_fingerprint: row.fingerprint },
        after: { host_key_fingerprint: fingerprint },
      },
      now,
    );
    return { device_id: id, host_key_fingerprint: fingerprint, previous_fingerprint: row.fingerprint };
  });
}

export function registerHostKeyRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(resetHostKeyRoute, async (c) => {
    const body = (c.req.valid("json") ?? {}) as z.infer<typeof HostKeyResetInput>;
    const { db, clock } = c.var.services;
    const data = await resetHostKey(db, c.var.auth, c.req.valid("param").id, body.fingerprint ?? null, clock.now());
    return c.json({ data }, 200);
  });
}

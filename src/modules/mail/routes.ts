import { z } from "@hono/zod-openapi";
import { apiRoute, ErrorBody, jsonBody, jsonResponse, MessageBody, pathIds } from "../../platform/http/route.ts";

export const MailSubscriptions = z
  .object({
    user_id: z.number().int(),
    task_failures: z.boolean().openapi({
      description:
        "A mail for each run with failures of a task whose notify_on_failure is set, listing every failed device and why",
    }),
    config_changes: z.boolean().openapi({ description: "A mail for each new configuration version of a device" }),
    config_change_tag_ids: z
      .array(z.number().int())
      .openapi({ description: "Only devices with one of these tags (empty: any device)" }),
    compliance_failures: z.boolean().openapi({ description: "A mail when a device stops passing a compliance policy" }),
    updated_at: z.string().nullable().openapi({ description: "null: never set (no mail)" }),
  })
  .openapi("MailSubscriptions");

const flag = z.boolean({ error: "must be true or false" }).optional();

export const MailSubscriptionsPut = z
  .strictObject({
    task_failures: flag.openapi({ example: true }),
    config_changes: flag.openapi({ example: true }),
    config_change_tag_ids: z
      .array(z.number({ error: "must be a tag id" }).int("must be a tag id").min(1, "must be a tag id"), {
        error: "must be a list of tag ids",
      })
      .max(100, "must name at most 100 tags")
      .optional()
      .openapi({ example: [] }),
    compliance_failures: flag.openapi({ example: false }),
  })
  .openapi("MailSubscriptionsInput");

const tag = "Mail";
const scopeNote = "Mail about a device reaches a user only when their role sees the device.";

export const getMailSubscriptionsRoute = apiRoute({
  method: "get",
  path: "/users/{id}/mail-subscriptions",
  operationId: "getMailSubscriptions",
  tag,
  ability: "users.read",
  summary: "Show what mail a user gets",
  description: `The user's mail subscriptions; all false until set. ${scopeNote}`,
  request: { params: pathIds("id") },
  responses: { 200: jsonResponse(z.object({ data: MailSubscriptions }), "The user's subscriptions") },
});

export const putMailSubscriptionsRoute = apiRoute({
  method: "put",
  path: "/users/{id}/mail-subscriptions",
  operationId: "setMailSubscriptions",
  tag,
  ability: "users.write",
  summary: "Set what mail a user gets",
  description: `Replaces the user's subscriptions: a field left out is false (no tags: any device). Another user's subscriptions change only for a caller who may manage that user (their role grants nothing beyond the caller's own, scope included): 403 otherwise. Mail goes to the user's e-mail address through the SMTP server in the settings. ${scopeNote}`,
  request: { params: pathIds("id"), ...jsonBody(MailSubscriptionsPut) },
  responses: { 200: jsonResponse(z.object({ data: MailSubscriptions }), "The subscriptions now") },
});

/** The test-send's body (the settings page's form is checked by the same schema). */
export const TestMailBody = z.strictObject({
  to: z
    .email("must be an e-mail address")
    .max(254, "must be at most 254 characters")
    .openapi({ example: "noc@example.net" }),
});

export const testMailRoute = apiRoute({
  method: "post",
  path: "/settings/smtp/test",
  operationId: "sendTestMail",
  tag: "Settings",
  ability: "system.write",
  summary: "Send a test mail",
  description:
    "Sends one short message to `to` through the SMTP settings in force, now, and answers when the server accepted it. " +
    "422 when SMTP is not set up (smtp.host and smtp.from_address); 502 with the server's reason when it refused or did not answer.",
  request: jsonBody(TestMailBody),
  responses: {
    200: jsonResponse(MessageBody, "The SMTP server accepted the message"),
    502: {
      description: "The SMTP server refused the message or could not be reached; `message` says why",
      content: { "application/json": { schema: ErrorBody } },
    },
  },
});

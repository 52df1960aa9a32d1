import type { DbOrTx } from "../../db/client.ts";
import { failureReason } from "../../kernel/error-reason.ts";
import { ApiError } from "../../platform/http/errors.ts";
import type { SecretBox } from "../../platform/secrets/box.ts";
import { getSettings } from "../../platform/settings/service.ts";
import { composeMail } from "./compose.ts";
import { MailNotConfiguredError, sendMail } from "./send.ts";

/**
 * One short message to `to` through the SMTP settings in force, to check them; answers the server it went
 * through (host:port). SMTP not set up is a 422; a server that refused or did not answer a 502 with its reason.
 */
export async function sendTestMail(db: DbOrTx, secrets: SecretBox, to: string, sentBy: string): Promise<string> {
  const { settings } = await getSettings(db);
  const server = `${settings.smtp.host}:${settings.smtp.port}`;
  const message = composeMail([to], {
    subject: "[netkeep] Test message",
    intro: [
      `This is a test message from netkeep, sent by ${sentBy} to check the SMTP settings.`,
      "If you read this, mail works.",
    ],
  });
  try {
    await sendMail(db, secrets, message);
  } catch (err) {
    if (err instanceof MailNotConfiguredError) throw new ApiError(422, err.message);
    throw new ApiError(502, `The SMTP server ${server} did not take the message: ${failureReason(err).slice(0, 300)}`);
  }
  return server;
}

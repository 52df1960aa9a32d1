import type { Db } from "../../db/client.ts";
import { failureReason } from "../../kernel/error-reason.ts";
import { ApiError } from "../../platform/http/errors.ts";
import type { SecretBox } from "../../platform/secrets/box.ts";
import { getSettings } from "../../platform/settings/service.ts";
import { composeMail } from "./compose.ts";
import { MailNotConfiguredError, sendMail } from "./send.ts";

/**
 * One short message to `to` through the SMTP settings in force, now; answers what happened once the server took
 * it. 422 when SMTP is not set up, 502 with the server's reason when it refused or did not answer.
 */
export async function sendTestMail(db: Db, secrets: SecretBox, sender: string, to: string): Promise<string> {
  const { settings } = await getSettings(db);
  const message = composeMail([to], {
    subject: "[netkeep] Test message",
    intro: [
      `This is a test message from netkeep, sent by ${sender} to check the SMTP settings.`,
      "If you read this, mail works.",
    ],
  });
  try {
    await sendMail(db, secrets, message);
  } catch (err) {
    if (err instanceof MailNotConfiguredError) throw new ApiError(422, err.message);
    throw new ApiError(
      502,
      `The SMTP server ${settings.smtp.host}:${settings.smtp.port} did not take the message: ${failureReason(err).slice(0, 300)}`,
    );
  }
  return `Sent a test message to ${to} through ${settings.smtp.host}:${settings.smtp.port}`;
}

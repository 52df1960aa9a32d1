import { createTransport } from "nodemailer";
import type { DbOrTx } from "../../db/client.ts";
import type { SecretBox } from "../../platform/secrets/box.ts";
import { getSettings, smtpPassword } from "../../platform/settings/service.ts";

export type MailMessage = { to: string[]; subject: string; text: string; html: string };

/** SMTP is not set up (no smtp.host or smtp.from_address): nothing can be sent until an admin sets it. */
export class MailNotConfiguredError extends Error {}

/** How long a send waits for the server at each step; a hung relay fails the send instead of holding a job. */
const CONNECT_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

/**
 * Sends one message (a plain text part and an HTML part) through the SMTP server in the settings, read at each
 * send so a change applies at once. TLS modes: `tls` is TLS from the first byte (port 465), `starttls` requires
 * the upgrade (refusing a server that does not offer it), `none` never upgrades. Throws what nodemailer threw.
 */
export async function sendMail(db: DbOrTx, secrets: SecretBox, message: MailMessage): Promise<void> {
  const { settings } = await getSettings(db);
  const smtp = settings.smtp;
  if (!smtp.host || !smtp.from_address)
    throw new MailNotConfiguredError("SMTP is not set up: set smtp.host and smtp.from_address in the settings");
  const password = smtp.username ? await smtpPassword(db, secrets) : null;
  const transport = createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.encryption === "tls",
    requireTLS: smtp.encryption === "starttls",
    ignoreTLS: smtp.encryption === "none",
    auth: smtp.username ? { user: smtp.username, pass: password ?? "" } : undefined,
    connectionTimeout: CONNECT_TIMEOUT_MS,
    greetingTimeout: CONNECT_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  });
  try {
    await transport.sendMail({
      from: smtp.from_address,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
    });
  } finally {
    transport.close();
  }
}

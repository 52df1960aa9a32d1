import { MailNotConfiguredError, sendMail } from "./send.ts";
import { mailFor } from "./messages.ts";
import { mailRecipients, recipient } from "./recipients.ts";
import type { EventConsumer } from "../events/index.ts";
import { failureReason } from "../../kernel/error-reason.ts";

/** Tries per mail before it is given up: a relay down for about an hour and a half still gets the mail out. */
export const MAIL_ATTEMPTS = 6;
const retryDelayMs = (attempt: number) => 60_000 * 2 ** (attempt - 1);

/**
 * Mail as an event consumer: one job per event and recipient (recipients.ts), so each user gets one message per
 * event, a failed task run listing every failed device in one mail, and a relay that refuses one recipient does
 * not hold back the others. A send that fails is retried with a doubling delay (1, 2, 4 ... minutes).
 */
export const mailConsumer: EventConsumer = {
  name: "email",
  types: ["task.run.finished", "config.changed", "compliance.failed"],
  targets(db) {
    const recipientsOf = mailRecipients(db);
    return async (event) => (await recipientsOf(event)).map(String);
  },
  async handle({ db, secrets, clock }, event, target, job) {
    const who = target ? await recipient(db, Number(target)) : undefined;
    if (!who) return { outcome: "done", message: "the recipient is gone or disabled; nothing sent" };
    const message = await mailFor(db, event, who);
    if (!message) return { outcome: "done", message: `nothing in ${who.username}'s scope; nothing sent` };
    try {
      await sendMail(db, secrets, message);
      return { outcome: "done", message: `mailed ${who.username}`, result: { to: who.userId } };
    } catch (err) {
      if (err instanceof MailNotConfiguredError) return { outcome: "failed", message: err.message };
      const reason = `the mail to ${who.username} was not sent: ${failureReason(err).slice(0, 300)}`;
      if (job.attempts >= MAIL_ATTEMPTS) return { outcome: "failed", message: reason };
      return { outcome: "retry", at: new Date(clock.now().getTime() + retryDelayMs(job.attempts)), message: reason };
    }
  },
};

import type { MailMessage } from "./send.ts";

/**
 * A message from a title, a few lines of introduction and an optional table: the plain text part and a simple
 * HTML part say the same thing. Every value is escaped in the HTML; nothing a device or user named is trusted.
 */
export type MailBody = {
  subject: string;
  intro: string[];
  table?: { head: string[]; rows: string[][] };
  link?: string;
};

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function composeMail(to: string[], body: MailBody): MailMessage {
  const text = [...body.intro, ""];
  if (body.table) {
    for (const row of body.table.rows)
      text.push(`- ${row.map((cell, i) => (i === 0 ? cell : `${body.table!.head[i]}: ${cell}`)).join("; ")}`);
    text.push("");
  }
  if (body.link) text.push(body.link, "");
  const html = [
    `<p>${body.intro.map(escape).join("<br>")}</p>`,
    body.table
      ? `<table border="1" cellpadding="4" cellspacing="0"><tr>${body.table.head.map((h) => `<th align="left">${escape(h)}</th>`).join("")}</tr>` +
        body.table.rows.map((r) => `<tr>${r.map((c) => `<td>${escape(c)}</td>`).join("")}</tr>`).join("") +
        "</table>"
      : "",
    body.link ? `<p><a href="${escape(body.link)}">${escape(body.link)}</a></p>` : "",
  ].join("\n");
  return {
    to,
    subject: body.subject,
    text: text.join("\n"),
    html: `<!doctype html><html><body>\n${html}\n</body></html>`,
  };
}

/**
 * Syslog messages as devices send them: RFC 5424 (`<PRI>1 TIMESTAMP HOST APP PROCID MSGID [SD] MSG`) and the BSD
 * format of RFC 3164 (`<PRI>` then whatever the device writes: a timestamp, perhaps a host name and sequence number,
 * a tag, the text). Devices take RFC 3164 loosely (Cisco's `<189>123: *Nov 28 21:00:00.123: %SYS-5-CONFIG_I: ...`),
 * so only the priority is required of it, and what templates match is the text after the priority. A hand-written
 * parser: what is needed of a message is that small, and a flood is parsed at the rate it arrives.
 */

export type SyslogMessage = {
  facility: number;
  severity: number;
  format: "rfc3164" | "rfc5424";
  hostname?: string;
  /** What templates' `syslog.changed` patterns are tested against: see the header of template-schema.ts. */
  text: string;
};

/** Longer messages are malformed here: no configuration-change message is near this, and a flood may try. */
export const MAX_MESSAGE_BYTES = 8192;

const PRI = /^<(\d{1,3})>/;

/** The message, or undefined when it is no syslog message (no valid priority, empty, oversized). */
export function parseSyslog(raw: string): SyslogMessage | undefined {
  if (raw.length > MAX_MESSAGE_BYTES) return undefined;
  const pri = PRI.exec(raw);
  if (!pri) return undefined;
  const value = Number(pri[1]);
  if (value > 191 || (pri[1]!.length > 1 && pri[1]!.startsWith("0"))) return undefined;
  const rest = raw.slice(pri[0].length).replace(/[\r\n\0]+$/, "");
  const base = { facility: value >> 3, severity: value & 7 };
  if (rest.startsWith("1 ")) {
    const parsed = parse5424(rest.slice(2));
    if (parsed) return { ...base, format: "rfc5424", ...parsed };
  }
  if (!rest.trim()) return undefined;
  const host = /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d ([^\s:]+) /.exec(rest)?.[1];
  return { ...base, format: "rfc3164", hostname: host, text: rest };
}

/** TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA [MSG], or undefined when the header is not that. */
function parse5424(header: string): { hostname?: string; text: string } | undefined {
  const fields = /^(\S+) (\S+) (\S+) (\S+) (\S+) /.exec(header);
  if (!fields) return undefined;
  const [, , hostname, app, , msgid] = fields as unknown as [string, string, string, string, string, string];
  let i = fields[0].length;
  if (header[i] === "-") i++;
  else {
    // One or more [id param="value"...] elements; a value may hold \" and \].
    if (header[i] !== "[") return undefined;
    while (header[i] === "[") {
      i++;
      let quoted = false;
      for (; i < header.length; i++) {
        const c = header[i];
        if (quoted && c === "\\") i++;
        else if (c === '"') quoted = !quoted;
        else if (!quoted && c === "]") break;
      }
      if (i >= header.length) return undefined;
      i++;
    }
  }
  if (i < header.length && header[i] !== " ") return undefined;
  const msg = header.slice(i + 1).replace(/^\uFEFF/, "");
  const text =
    [app, msgid]
      .filter((f) => f !== "-")
      .map((f) => `${f}: `)
      .join("") + msg;
  return { hostname: hostname === "-" ? undefined : hostname, text };
}

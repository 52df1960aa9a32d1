/**
 * The connection template format: the contract between the templates API, which stores templates, and the
 * collector, which executes them. Pure (zod + yaml only) so the API on Deno and the collector on Node share it.
 *
 * A template is a YAML mapping. What the collector does with one, in order:
 *   1. connect with `protocol` to `port` (SSH: password, key or keyboard-interactive; `legacy_algorithms` also
 *      offers old ciphers and key exchanges). Telnet: wait for `login.username_prompt`, send the user name, wait
 *      for `login.password_prompt`, send the password. SSH shell: the same when those prompts come before `prompt`
 *      (devices that ask for the login again inside the session).
 *   2. shell mode (`exec: false`): wait until the last line received (ANSI escape sequences removed, see
 *      promptTail in template-text.ts) matches `prompt`. When the credentials carry an enable password and the
 *      template has `enable`: send `enable.command`, answer `enable.password_prompt` with the password, and wait
 *      for `enable.prompt` (default: `prompt`).
 *   3. send each `setup` line, then each command, each time waiting for the prompt. A setup line or command
 *      may be a mapping `{command: ..., optional: true}`: when an optional one times out (after a short
 *      silence, SessionLimits.optionalIdleTimeoutMs) or fails, the job's result lists it under
 *      `skipped_commands` and the session goes on; the configuration command cannot be optional. Commands are the device's
 *      category's commands, or `commands` when the category has none. Whenever the last line matches
 *      `pager.pattern`, send `pager.answer` (as is, no line ending) and keep reading.
 *      exec mode (`exec: true`, SSH only): every setup line and command runs on its own exec channel, whose
 *      end is the end of the output; there is no shell, no prompt, no pager.
 *      In either mode a command may be `{scp: <path>}` (SSH only): the file is fetched over SCP on an exec
 *      channel (collector/transports/scp.ts) and stored under the command `scp <path>`.
 *   4. shell mode: send each `teardown` line without waiting for a prompt; then close.
 * `protocol: netconf` (port 830 by default) instead opens the SSH `netconf` subsystem, exchanges hellos (base:1.1
 * chunked framing when the device offers it), sends one `<get-config>` of the running datastore (with the
 * `netconf.filter` subtree filter) and `<close-session>`; the answer is stored under the command `get-config` as
 * canonical XML, `netconf.secrets` elements masked and `netconf.drop` elements and attributes left out (see
 * netconfSection). Such a template has no prompt, setup, teardown, pager, enable or push.
 * Every line sent ends with `line_ending`. Each command's output is cleaned (echo, prompt, ANSI codes, line
 * endings -> "\n"), then `filters.drop` lines are removed and `secrets` are replaced; that text is stored.
 * `filters.volatile` lines stay stored but are ignored when deciding whether the configuration changed.
 * `config_command` names the command whose output is the device's configuration (default: the first command).
 * Its stored text (filters and secrets applied) must not be empty, must be at least `min_bytes` long and must
 * match `config_marker` (a pattern a real configuration always holds, over the whole text with ^ and $ at line
 * ends: `^hostname `); otherwise the job ends `output_invalid` and nothing of the session is stored.
 * `snmp` applies when the device's credential set has SNMP settings (v3 user, else v2c community): before
 * logging in, the collector reads sysDescr, sysObjectID, sysName and sysUpTime from UDP `snmp.port` (default
 * 161; a device's custom attribute `snmp_port` overrides it, as device_port_override does `port`) to fill the
 * device's model and vendor when they are empty. `snmp.config_changed_oid` is an OID whose value changes when
 * the configuration does (Cisco's ccmHistoryRunningLastChanged, 1.3.6.1.4.1.9.9.43.1.1.1.0): when it still
 * holds the value read at the last successful download, every command has a stored version and the device has
 * not restarted since, the download is skipped ("unchanged, verified by SNMP"). An agent that does not answer
 * never fails a download: the job's result says so and the download goes on.
 * `detect` says how POST /devices/{id}/detect recognises the family: see detectSection.
 * `push` says how a snippet is sent (collector/push.ts), always over an interactive shell (an exec template's
 * `prompt` is then used): `enter` lines (configuration mode), then each snippet line, each waiting for the prompt;
 * an answer with a line matching one of `errors` stops the push. A tail matching a `prompts` pattern is answered
 * with its `answer` (sent with the line ending). When every line was taken: `save` (leave configuration mode,
 * write memory, commit); otherwise, or for a check that must not save: `discard`. `candidate: true` means the
 * lines take effect only when saved (Junos, VyOS commit), so a discarded push changed nothing. `verify_lines: true`
 * says a line taken shows up as such in the configuration (`config_command`), so one missing from the configuration
 * downloaded after the push is flagged (IOS-like families).
 *
 * Regular expressions run in RE2 and are written as for JavaScript (docs/patterns.md); the built-in templates'
 * own patterns run in JavaScript's engine (template-patterns.ts). `prompt`, `pager.pattern` and the login/enable
 * prompts are tested against the last line received; `filters` entries are tested against one line at a time;
 * `secrets` patterns run over a command's whole output with ^ and $ matching at line ends, so one pattern may
 * span lines, and `replace` may use $1.. for the pattern's groups. A secret rule may carry an `example` (a line it
 * masks, secret values between [[ and ]]) and a `look_alike` (a line it leaves alone): both are checked on save
 * (secret-examples.ts), and every built-in rule has them (collector/templates/templates.test.ts).
 */
import { z } from "zod";
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from "yaml";
import { PatternError } from "../../kernel/patterns/user-pattern.ts";
import { secretRuleProblems } from "./secret-examples.ts";
import { xmlFragmentProblem } from "./netconf-xml.ts";
import {
  compileTemplatePattern,
  DEFAULT_PASSWORD_PROMPT,
  DEFAULT_USERNAME_PROMPT,
  type TemplatePatternRole,
} from "./template-patterns.ts";

/**
 * A pattern for its role (template-patterns.ts: shipped patterns in JavaScript's engine, the rest in RE2) that
 * compiles and cannot match everything by being empty.
 */
const patternFor = (role: TemplatePatternRole) =>
  z
    .string()
    .min(1, "must not be empty")
    .superRefine((source, ctx) => {
      try {
        compileTemplatePattern(source, role);
      } catch (err) {
        if (!(err instanceof PatternError)) throw err;
        ctx.addIssue({ code: "custom", message: err.message });
      }
    });
const regex = patternFor("line");

/** One line the collector sends: the line ending is added when it is sent. */
const line = z
  .string()
  .min(1, "must not be empty")
  .refine((s) => !/[\r\n]/.test(s), "must be one line (the line ending is added when it is sent)");

/**
 * A setup line or command: the line itself, or a mapping that marks it optional (`{command: show vtp status,
 * optional: true}`): a device that errors or stays silent on an optional one does not cost the backup.
 */
const commandLine = z.union([line, z.strictObject({ command: line, optional: z.boolean().default(false) })]);

/** A file on the device for `scp -f`: sent as one word, so no spaces or shell characters, and not an option. */
const remotePath = z
  .string()
  .regex(
    /^[\w.\/~+@:-]+$/,
    "must be a file path of letters, digits and . / ~ + @ : _ - (no spaces or shell characters)",
  )
  .refine((p) => !p.startsWith("-"), "must not start with -");

/**
 * A command, or a file fetched over SCP through the same SSH connection (`{scp: config.ini}`: devices such as APC
 * cards whose configuration is a file, not a command's output). A fetched file is stored under `scp <path>`.
 */
const commandEntry = z.union([
  line,
  z
    .strictObject({ command: line.optional(), scp: remotePath.optional(), optional: z.boolean().default(false) })
    .superRefine((c, ctx) => {
      if (c.command === undefined && c.scp === undefined)
        ctx.addIssue({ code: "custom", path: ["command"], message: "is required" });
      if (c.command !== undefined && c.scp !== undefined)
        ctx.addIssue({
          code: "custom",
          path: ["scp"],
          message: "cannot go with command: an entry runs a command or fetches a file",
        });
    }),
]);
const commandText = (c: z.output<typeof commandEntry>) => (typeof c === "string" ? c : (c.command ?? `scp ${c.scp}`));

/** A line filter: a regex matching single lines, or a block from a line matching `from` to one matching `to`. */
const lineFilter = z.union([regex, z.strictObject({ from: regex, to: regex })]);

/**
 * A secret rule, with the cases that show what it does: `example`, a line it must mask, each secret value in it
 * written between [[ and ]]; `look_alike`, a line like it that holds no secret and must stay as it is. Both are
 * checked here (secretRuleProblems), so a rule that masks a neighbouring word instead of the value is refused.
 */
const secretRule = z
  .strictObject({
    pattern: patternFor("text"),
    replace: z.string(),
    example: z.string().min(1).optional(),
    look_alike: z.string().min(1).optional(),
  })
  .superRefine((rule, ctx) => {
    const problem = unknownGroupReference(rule.pattern, rule.replace);
    if (problem) ctx.addIssue({ code: "custom", path: ["replace"], message: problem });
    // A pattern that does not compile has its own issue on its key.
    if (problem || !compiles(rule.pattern)) return;
    for (const p of secretRuleProblems(rule)) ctx.addIssue({ code: "custom", path: [p.key], message: p.message });
  });

/** How a snippet is pushed: see the header. */
const pushSection = z.strictObject({
  enter: z.array(line).default([]),
  save: z.array(line).default([]),
  discard: z.array(line).default([]),
  candidate: z.boolean().default(false),
  verify_lines: z.boolean().default(false),
  errors: z.array(regex).default([]),
  prompts: z
    .array(z.strictObject({ pattern: regex, answer: z.string().refine((s) => !/[\r\n]/.test(s), "must be one line") }))
    .default([]),
});

const oid = z.string().regex(/^\.?\d+(\.\d+)+$/, "must be a numeric OID such as 1.3.6.1.4.1.9.9.43.1.1.1.0");

/**
 * How POST /devices/{id}/detect recognises the family (collector/detect-job.ts): after login (and enable, when
 * the credentials carry an enable password and a template whose prompt fits has `enable`) it has the banner,
 * the prompt line, and the output of `command` (default `show version`; SNMP's sysDescr and sysObjectID too when
 * the agent answers). `version` must match that output, or `sys_descr` (default: `version`) sysDescr, for the
 * template to be proposed; `prompt`, `banner` and a `sys_object_id` prefix (the vendor's enterprise subtree,
 * 1.3.6.1.4.1.<n>, or a product branch under it) strengthen a match; `model`, `os_version` and `serial` take their first
 * group from the output (or sysDescr); `sys_descr_model` and `sys_descr_os_version` from sysDescr alone, as SNMP
 * identification reads it before any login (collector/snmp-identity.ts), as does the vendor: the `vendor` of the
 * templates whose `sys_object_id` holds the longest prefix of sysObjectID. A `generic: true` family (a plain Linux host, which many appliances also
 * are) is proposed only when no other family fits. `netconf_capability` (a NETCONF template's, instead of
 * `version`) is tested against the capabilities of the device's NETCONF hello, one per line, when the device refuses
 * a shell and its exec channels show nothing a family recognises.
 */
const detectSection = z
  .strictObject({
    banner: patternFor("text").optional(),
    prompt: regex.optional(),
    command: line.default("show version"),
    version: patternFor("text").optional(),
    netconf_capability: patternFor("text").optional(),
    sys_descr: patternFor("text").optional(),
    sys_object_id: z.array(oid.transform((o) => o.replace(/^\./, ""))).default([]),
    sys_descr_model: patternFor("text").optional(),
    sys_descr_os_version: patternFor("text").optional(),
    generic: z.boolean().default(false),
    model: patternFor("text").optional(),
    os_version: patternFor("text").optional(),
    serial: patternFor("text").optional(),
  })
  .refine((d) => d.version !== undefined || d.netconf_capability !== undefined, {
    message: "needs version (or netconf_capability for a NETCONF template)",
    path: ["version"],
  });

/**
 * An element a NETCONF template names: local names (no prefixes) from the outside in, separated by "/", matched
 * against the end of an element's path (`community/name` is any `name` inside a `community`); the last may be
 * `@attribute` (an attribute of the element before it, or of any element when alone).
 */
const elementSelector = z
  .string()
  .regex(
    /^(?:[\w.-]+\/)*(?:[\w.-]+|@[\w.-]+)$/,
    "must be element names separated by / (local names, without prefixes), the last one may be @attribute",
  );

/**
 * How a `protocol: netconf` template backs a device up (collector/netconf/): `<get-config>` of the running
 * datastore over the SSH `netconf` subsystem, with `filter` (a subtree filter, the XML inside `<filter>`) when
 * given; stored as canonical XML (src/modules/templates/netconf-xml.ts) with the text of the `secrets` elements
 * masked and the `drop` elements and attributes left out.
 */
const netconfSection = z.strictObject({
  filter: z
    .string()
    .min(1, "must not be empty")
    .superRefine((xml, ctx) => {
      const problem = xmlFragmentProblem(xml);
      if (problem) ctx.addIssue({ code: "custom", message: `is not well-formed XML: ${problem}` });
    })
    .optional(),
  secrets: z.array(elementSelector).default([]),
  drop: z.array(elementSelector).default([]),
  /**
   * Snippet pushes over NETCONF (collector/netconf/push.ts): a snippet is the XML inside `<config>`, sent with
   * `<edit-config>` to the candidate datastore, validated, committed with `<confirmed/>` and this timeout, then
   * confirmed; anything refused is discarded (`<discard-changes>`). The device must offer `:candidate`.
   */
  push: z.strictObject({ confirm_timeout_seconds: z.number().int().min(1).max(3600).default(120) }).optional(),
});

const groupNumber = z.number().int().min(1).max(9);

/**
 * The device family's "configuration changed" syslog messages (collector/syslog/): each `changed` rule's `pattern`
 * is tested against a received message (RFC 3164: everything after the priority; RFC 5424: `APP-NAME: MSGID: MSG`,
 * a `-` left out), and the groups `user`, `source` and `line` number say where the message names who changed it,
 * from which address and over which line. `example` is a message the rule must match (checked on save).
 */
const syslogSection = z.strictObject({
  changed: z
    .array(
      z
        .strictObject({
          pattern: regex,
          user: groupNumber.optional(),
          source: groupNumber.optional(),
          line: groupNumber.optional(),
          example: z.string().min(1).optional(),
        })
        .superRefine((rule, ctx) => {
          let pattern;
          try {
            pattern = compileTemplatePattern(rule.pattern, "line");
          } catch {
            return; // the pattern's own issue is on its key
          }
          for (const key of ["user", "source", "line"] as const) {
            const n = rule[key];
            if (n !== undefined && n > pattern.groupCount)
              ctx.addIssue({
                code: "custom",
                path: [key],
                message: `refers to group ${n}, but the pattern has ${pattern.groupCount} group${pattern.groupCount === 1 ? "" : "s"}`,
              });
          }
          if (rule.example !== undefined && !pattern.test(rule.example))
            ctx.addIssue({ code: "custom", path: ["example"], message: "is not matched by the pattern" });
        }),
    )
    .min(1),
});

/** Where an inventory of another tool comes from (svc import:oxidized, import:rancid). */
export const INVENTORY_SOURCES = ["oxidized", "rancid"] as const;
export type InventorySource = (typeof INVENTORY_SOURCES)[number];

/** A model name another tool's inventory uses; `vendor` when its devices come in under another of the template's names. */
const inventoryName = z.union([
  z.string().trim().min(1),
  z.strictObject({ name: z.string().trim().min(1), vendor: z.string().min(1) }),
]);

/** The command a NETCONF template's configuration is stored under. */
export const NETCONF_COMMAND = "get-config";

const TemplateDocument = z
  .strictObject({
    vendor: z.string().optional(),
    description: z.string().optional(),
    protocol: z.enum(["ssh", "telnet", "netconf"]).default("ssh"),
    port: z.number().int().min(1).max(65535).optional(),
    exec: z.boolean().default(false),
    legacy_algorithms: z.boolean().default(false),
    line_ending: z.enum(["\n", "\r\n"]).default("\n"),
    prompt: regex.optional(),
    login: z
      .strictObject({
        username_prompt: regex.default(DEFAULT_USERNAME_PROMPT),
        password_prompt: regex.default(DEFAULT_PASSWORD_PROMPT),
      })
      .default({ username_prompt: DEFAULT_USERNAME_PROMPT, password_prompt: DEFAULT_PASSWORD_PROMPT }),
    enable: z
      .strictObject({
        command: line,
        password_prompt: regex.default(DEFAULT_PASSWORD_PROMPT),
        prompt: regex.optional(),
      })
      .optional(),
    setup: z.array(commandLine).default([]),
    pager: z.strictObject({ pattern: regex, answer: z.string() }).optional(),
    commands: z.array(commandEntry).min(1).optional(),
    config_command: line.optional(),
    min_bytes: z.number().int().min(1).optional(),
    config_marker: patternFor("text").optional(),
    // How the stored text nests for compliance sections (src/modules/compliance/engine/sections.ts); left out,
    // by indentation (as most CLIs and NETCONF's canonical XML do). A device with no template nests as the
    // built-in templates of its vendor agree (compliance/engine/family.ts).
    nesting: z.enum(["indent", "braces", "fortios"]).optional(),
    // Other names the same devices are sold under (HPE's Comware is also H3C's): seeded as vendors beside `vendor`.
    also_sold_as: z.array(z.string().min(1)).default([]),
    // The names Oxidized's models and RANCID's device types give these devices: an import maps them to this
    // template and its vendor (src/modules/devices/inventory-import.ts).
    inventory_names: z
      .strictObject({
        oxidized: z.array(inventoryName).default([]),
        rancid: z.array(inventoryName).default([]),
      })
      .optional(),
    teardown: z.array(line).default([]),
    filters: z
      .strictObject({ drop: z.array(lineFilter).default([]), volatile: z.array(lineFilter).default([]) })
      .default({ drop: [], volatile: [] }),
    secrets: z.array(secretRule).default([]),
    // The device prints each secret encrypted anew at every display (FortiOS ENC values): a value that differs
    // from the last download's says nothing, so no digest of them is kept and no version says secrets_changed.
    secrets_reencrypted: z.boolean().default(false),
    push: pushSection.optional(),
    detect: detectSection.optional(),
    snmp: z
      .strictObject({ config_changed_oid: oid.optional(), port: z.number().int().min(1).max(65535).optional() })
      .optional(),
    netconf: netconfSection.optional(),
    syslog: syslogSection.optional(),
  })
  .superRefine((t, ctx) => {
    for (const source of INVENTORY_SOURCES) {
      (t.inventory_names?.[source] ?? []).forEach((entry, i) => {
        const vendor = typeof entry === "string" ? t.vendor : entry.vendor;
        if (vendor === undefined)
          ctx.addIssue({
            code: "custom",
            path: ["inventory_names", source, i],
            message: "needs the template's vendor",
          });
        else if (vendor !== t.vendor && !t.also_sold_as.includes(vendor))
          ctx.addIssue({
            code: "custom",
            path: ["inventory_names", source, i, "vendor"],
            message: "must be the template's vendor or one of also_sold_as",
          });
      });
    }
    const netconf = t.protocol === "netconf";
    if (netconf) {
      // A NETCONF session has no shell: what only a shell knows would be silently ignored.
      for (const key of ["prompt", "enable", "pager", "push"] as const) {
        if (t[key] !== undefined)
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: "has no meaning over NETCONF (protocol netconf has no shell)",
          });
      }
      for (const key of ["setup", "teardown"] as const) {
        if (t[key].length)
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: "has no meaning over NETCONF (protocol netconf has no shell)",
          });
      }
      if (t.exec)
        ctx.addIssue({
          code: "custom",
          path: ["exec"],
          message: "needs protocol ssh (exec channels are an SSH feature)",
        });
      if (t.config_command !== undefined && t.config_command !== NETCONF_COMMAND)
        ctx.addIssue({
          code: "custom",
          path: ["config_command"],
          message: `must be left out over NETCONF (the configuration is stored under '${NETCONF_COMMAND}')`,
        });
      if (t.commands !== undefined && (t.commands.length !== 1 || t.commands[0] !== NETCONF_COMMAND)) {
        ctx.addIssue({
          code: "custom",
          path: ["commands"],
          message: `must be left out over NETCONF (the configuration is stored under '${NETCONF_COMMAND}')`,
        });
      }
      return;
    }
    if (t.netconf !== undefined) ctx.addIssue({ code: "custom", path: ["netconf"], message: "needs protocol netconf" });
    if (t.commands === undefined) return ctx.addIssue({ code: "custom", path: ["commands"], message: "is required" });
    if (!t.exec && t.prompt === undefined)
      ctx.addIssue({ code: "custom", path: ["prompt"], message: "is required unless exec is true" });
    if (t.exec && t.protocol !== "ssh")
      ctx.addIssue({
        code: "custom",
        path: ["exec"],
        message: "needs protocol ssh (exec channels are an SSH feature)",
      });
    const scp = t.commands.findIndex((c) => typeof c !== "string" && c.scp !== undefined);
    if (scp >= 0 && t.protocol !== "ssh")
      ctx.addIssue({
        code: "custom",
        path: ["commands", scp, "scp"],
        message: "needs protocol ssh (SCP runs over the SSH connection)",
      });
    if (t.push && t.prompt === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["push"],
        message: "needs a prompt (a push runs in an interactive shell, even for exec templates)",
      });
    const commands = t.commands.map(commandText);
    if (t.config_command !== undefined && !commands.includes(t.config_command)) {
      ctx.addIssue({ code: "custom", path: ["config_command"], message: "must be one of the commands" });
    }
    const configCommand = t.config_command ?? commands[0]!;
    const i = t.commands.findIndex((c) => typeof c !== "string" && c.optional && commandText(c) === configCommand);
    if (i >= 0)
      ctx.addIssue({
        code: "custom",
        path: ["commands", i, "optional"],
        message: "the configuration command cannot be optional",
      });
  })
  .transform((t) => {
    const commands = t.commands ?? [NETCONF_COMMAND];
    return {
      ...t,
      port: t.port ?? (t.protocol === "ssh" ? 22 : t.protocol === "netconf" ? 830 : 23),
      setup: t.setup.map(commandText),
      commands: commands.map(commandText),
      config_command: t.config_command ?? commandText(commands[0]!),
      /** The commands that fetch a file over SCP, each with the file's path on the device. */
      scp: Object.fromEntries(
        commands.flatMap((c) => (typeof c !== "string" && c.scp !== undefined ? [[commandText(c), c.scp]] : [])),
      ) as Record<string, string>,
      /** Per inventory source, each model name (in lower case, as imports match any case) with its vendor. */
      inventory_names: Object.fromEntries(
        INVENTORY_SOURCES.map((source) => [
          source,
          (t.inventory_names?.[source] ?? []).map((entry) =>
            typeof entry === "string"
              ? { name: entry.toLowerCase(), vendor: t.vendor! }
              : { name: entry.name.toLowerCase(), vendor: entry.vendor },
          ),
        ]),
      ) as Record<InventorySource, { name: string; vendor: string }[]>,
      /** The setup lines and commands marked optional. */
      optional: [...t.setup, ...commands].flatMap((c) => (typeof c !== "string" && c.optional ? [commandText(c)] : [])),
    };
  });

export type ConnectionTemplate = z.output<typeof TemplateDocument>;
export type LineFilter = z.output<typeof lineFilter>;
export type PushSection = z.output<typeof pushSection>;
export type DetectSection = z.output<typeof detectSection>;
export type NetconfSection = z.output<typeof netconfSection>;
export type SyslogSection = z.output<typeof syslogSection>;
export type TemplateError = { line: number; key: string; message: string };
export type ParseResult = { ok: true; template: ConnectionTemplate } | { ok: false; errors: TemplateError[] };

/** The top-level keys, for messages and documentation. */
export const TEMPLATE_KEYS = Object.keys(TemplateDocument.in.shape) as (keyof typeof TemplateDocument.in.shape)[];

function compiles(pattern: string): boolean {
  try {
    compileTemplatePattern(pattern, "text");
    return true;
  } catch {
    return false;
  }
}

/** `$3` in a replacement for a pattern with two groups would be inserted literally: almost surely a mistake. */
function unknownGroupReference(pattern: string, replace: string): string | undefined {
  let groups: number;
  try {
    groups = compileTemplatePattern(pattern, "text").groupCount;
  } catch {
    return undefined; // the pattern's own error is reported on its key
  }
  for (const m of replace.matchAll(/\$(\d{1,2})/g)) {
    const digits = m[1]!;
    // JavaScript reads $12 as group 12 when it exists, else as group 1 followed by "2"; RE2's replacements here do the same.
    const n = digits.length === 2 && Number(digits) > groups ? Number(digits[0]) : Number(digits);
    if (n === 0 || n > groups)
      return `refers to group $${n}, but the pattern has ${groups} group${groups === 1 ? "" : "s"}`;
  }
  return undefined;
}

const TYPE_NAMES: Record<string, string> = {
  string: "text",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  array: "a list",
  object: "a mapping (key: value lines)",
};

type Issue = z.core.$ZodIssue;

/** The value at a path of the parsed document, to tell which branch of a union the author meant. */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const seg of path)
    v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[seg] : undefined;
  return v;
}

function problemOf(issue: Issue): string {
  switch (issue.code) {
    case "invalid_type":
      return /received undefined/.test(issue.message)
        ? "is required"
        : `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case "too_small":
      if (issue.origin === "array")
        return `must have at least ${Number(issue.minimum)} item${Number(issue.minimum) === 1 ? "" : "s"}`;
      if (issue.origin === "string") return "must not be empty";
      return `must be at least ${Number(issue.minimum)}`;
    case "too_big":
      return `must be at most ${Number(issue.maximum)}`;
    case "invalid_value":
      return `must be one of: ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_format":
    case "custom":
      return issue.message;
    default:
      return issue.message;
  }
}

/** Flattens zod issues into (path, problem) pairs: one per unknown key, the meant branch of a union. */
function flatten(
  issues: readonly Issue[],
  input: unknown,
  base: PropertyKey[] = [],
): { path: PropertyKey[]; problem: string }[] {
  const out: { path: PropertyKey[]; problem: string }[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      const allowed = Object.keys(shapeAt(path) ?? {});
      for (const key of issue.keys)
        out.push({
          path: [...path, key],
          problem: `unknown key${allowed.length ? `; use one of: ${allowed.join(", ")}` : ""}`,
        });
    } else if (issue.code === "invalid_union") {
      const value = valueAt(input, path);
      const branch =
        typeof value === "string"
          ? issue.errors[0]
          : value !== null && typeof value === "object" && !Array.isArray(value)
            ? issue.errors[1]
            : undefined;
      if (branch) out.push(...flatten(branch, input, path));
      else if (path[0] === "setup" || path[0] === "commands")
        out.push({
          path,
          problem:
            path[0] === "commands"
              ? "must be a command, or a mapping with keys command (or scp) and optional"
              : "must be a command, or a mapping with keys command and optional",
        });
      else out.push({ path, problem: "must be a regular expression, or a block with keys from and to" });
    } else {
      out.push({ path, problem: problemOf(issue) });
    }
  }
  return out;
}

/** The keys an object in the template may have, for "use one of" hints. */
function shapeAt(path: readonly PropertyKey[]): Record<string, unknown> | undefined {
  let schema: z.ZodType = TemplateDocument.in;
  for (const seg of path) {
    schema = unwrap(schema);
    if (schema instanceof z.ZodObject) schema = (schema.shape as Record<string, z.ZodType>)[String(seg)]!;
    else if (schema instanceof z.ZodArray) schema = schema.element as z.ZodType;
    else if (schema instanceof z.ZodUnion)
      schema = (schema.options as z.ZodType[]).find((o) => unwrap(o) instanceof z.ZodObject)!;
    else return undefined;
    if (!schema) return undefined;
  }
  schema = unwrap(schema);
  if (schema instanceof z.ZodUnion)
    schema = unwrap((schema.options as z.ZodType[]).find((o) => unwrap(o) instanceof z.ZodObject)!);
  return schema instanceof z.ZodObject ? (schema.shape as Record<string, unknown>) : undefined;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    if (s instanceof z.ZodDefault || s instanceof z.ZodOptional) s = s.unwrap() as z.ZodType;
    else if (s instanceof z.ZodPipe) s = s.in as z.ZodType;
    else return s;
  }
}

/**
 * Where a path points in the YAML source: the line of its key (or list item). A path that does not exist (a
 * required key left out) points at the nearest part that does.
 */
function lineOf(doc: Document, counter: LineCounter, path: readonly PropertyKey[]): number {
  let node: unknown = doc.contents;
  let offset = (doc.contents as { range?: [number, number, number] } | null)?.range?.[0] ?? 0;
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) break;
      offset = (pair.key as { range?: [number, number, number] }).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(seg)] as { range?: [number, number, number] } | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else break;
  }
  return counter.linePos(offset).line;
}

const error = (line: number, key: string, problem: string): TemplateError => ({
  line,
  key,
  message: key ? `line ${line}: key \`${key}\`: ${problem}` : `line ${line}: ${problem}`,
});

/**
 * Parses and checks a template's YAML text. Every problem is reported with its line and key path
 * (`secrets.0.pattern`), e.g. "line 4: key `prompt`: is not a valid regular expression: ...".
 */
export function parseTemplate(code: string): ParseResult {
  const counter = new LineCounter();
  const doc = parseDocument(code, { lineCounter: counter, uniqueKeys: true });
  if (doc.errors.length) {
    return {
      ok: false,
      errors: doc.errors.map((e) =>
        error(
          e.linePos?.[0].line ?? 1,
          "",
          `not valid YAML: ${e.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "")}`,
        ),
      ),
    };
  }
  let input: unknown;
  try {
    input = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    return { ok: false, errors: [error(1, "", `not valid YAML: ${err instanceof Error ? err.message : String(err)}`)] };
  }
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    return {
      ok: false,
      errors: [
        error(1, "", `the template must be a YAML mapping of keys (${TEMPLATE_KEYS.slice(0, 4).join(", ")}, ...)`),
      ],
    };
  }
  const result = TemplateDocument.safeParse(input);
  if (result.success) return { ok: true, template: result.data };
  const errors = flatten(result.error.issues, input).map(({ path, problem }) =>
    error(lineOf(doc, counter, path), path.map(String).join("."), problem),
  );
  errors.sort((a, b) => a.line - b.line);
  return { ok: false, errors };
}

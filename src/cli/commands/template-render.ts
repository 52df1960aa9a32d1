import { readFileSync } from "node:fs";
import { eq, or } from "drizzle-orm";
import { nameKey } from "../../db/name-key.ts";
import { templates } from "../../db/schema/index.ts";
import { renderStored } from "../../modules/templates/index.ts";
import { parseTemplate } from "../../modules/templates/index.ts";
import { CliError, defineCommand } from "../command.ts";

export const templateRenderCommand = defineCommand({
  summary:
    "Show what a template would store of a configuration file: the text with secrets masked, then each masked span and the rule behind it",
  options: {
    template: {
      type: "string",
      placeholder: "ID|NAME",
      required: true,
      positional: true,
      description: "the template, by id or by name",
    },
    file: {
      type: "string",
      placeholder: "FILE",
      required: true,
      positional: true,
      description: "the configuration as the device prints it; - reads stdin",
    },
  },
  async run(flags, { db, io }) {
    const given = flags.template.trim();
    const [row] = await db
      .select({ id: templates.id, name: templates.name, code: templates.code })
      .from(templates)
      .where(
        /^\d+$/.test(given)
          ? or(eq(templates.id, Number(given)), eq(templates.nameKey, nameKey(given)))
          : eq(templates.nameKey, nameKey(given)),
      );
    if (!row) throw new CliError(`no template has the id or name '${given}' (GET /api/v1/templates lists them)`);
    let text: string;
    try {
      text = flags.file === "-" ? await io.readStdin() : readFileSync(flags.file, "utf8");
    } catch (error) {
      throw new CliError(`cannot read '${flags.file}': ${(error as Error).message}`);
    }
    const parsed = parseTemplate(row.code);
    if (!parsed.ok) throw new CliError(`template ${row.name} does not parse; fix it through the templates API`);
    const rendered = renderStored(text.replace(/\r\n?/g, "\n"), parsed.template);
    for (const line of rendered.text.split("\n")) io.print(line);
    io.print("");
    io.print(
      `# ${rendered.masks.length} value${rendered.masks.length === 1 ? "" : "s"} masked by template ${row.name} (id ${row.id}); ${rendered.lines_dropped} line${rendered.lines_dropped === 1 ? "" : "s"} dropped by its filters`,
    );
    for (const m of rendered.masks)
      io.print(`# line ${m.line} column ${m.column}: ${m.layer} ${m.rule}${m.pattern ? ` /${m.pattern}/` : ""}`);
  },
});

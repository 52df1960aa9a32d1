import { parseTemplate } from "../src/modules/templates/index.ts";

/**
 * Parsed templates by their text: a template changes rarely, and parsing its YAML for every job cost about 1 ms.
 * Keeping the same parsed object also keeps what is compiled from it (template-text.ts caches its filters by it).
 */
const parsedTemplates = new Map<string, ReturnType<typeof parseTemplate>>();

export function parseTemplateOnce(code: string): ReturnType<typeof parseTemplate> {
  let parsed = parsedTemplates.get(code);
  if (!parsed) {
    if (parsedTemplates.size >= 100) parsedTemplates.clear();
    parsed = parseTemplate(code);
    parsedTemplates.set(code, parsed);
  }
  return parsed;
}

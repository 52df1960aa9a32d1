/**
 * Keeps the configuration search index (config_search_docs + the FTS5 table config_search, whose tokens
 * search-grams.ts describes) in step with stored versions. Each new version adds one document: the whole text for the first version of a series, then only the
 * lines that version added. So every line of every stored version is in some document of its series, and the
 * index costs about one version per series however long the history.
 */
import { sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client.ts";
import { configSearchDocs } from "../../db/schema/index.ts";
import { commonGrams } from "./search-common-grams.ts";
import { gramDocument } from "./search-grams.ts";

/** The lines of a text that `previous` lacks. */
function newLines(text: string, previous: string): string[] {
  const old = new Set(previous ? previous.split("\n") : []);
  return text.split("\n").filter((line) => line !== "" && !old.has(line));
}

/**
 * Indexes a version as it is stored. `previous` is the text of the version it follows ("" for the first of
 * its series). Call it inside the transaction that stores the version.
 */
export async function indexConfigText(
  tx: DbOrTx,
  input: { deviceId: number; command: string; configId: number; text: string; previous: string },
): Promise<void> {
  const [doc] = await tx
    .insert(configSearchDocs)
    .values({ deviceId: input.deviceId, command: input.command, configId: input.configId })
    .returning({ id: configSearchDocs.id });
  const body = gramDocument(newLines(input.text, input.previous), await commonGrams(tx));
  if (body) await tx.run(sql`insert into config_search (rowid, body) values (${doc!.id}, ${body})`);
}

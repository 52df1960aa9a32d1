import { text } from "drizzle-orm/sqlite-core";

/**
 * The one rule by which names compare: two names are the same when their keys are equal. Compatibility
 * normalisation (NFKC: "ﬁ" is "fi", full-width "Ａ" is "A", a composed "Ç" equals "C" + combining cedilla), then
 * full case folding by mapping to upper case and back (so "ß" matches "SS" and a final "ς" matches "Σ", which a
 * plain toLowerCase misses), then NFKC again because case mapping can denormalise. This is what PRECIS (RFC 8265)
 * does to usernames. SQLite's lower() folds ASCII only, so the key is computed here and stored beside the name
 * (`name_key` columns); unique indexes and lookups use the stored key, never lower().
 */
export function nameKey(name: string): string {
  return name.normalize("NFKC").toUpperCase().toLowerCase().normalize("NFKC");
}

/** The stored key column of a name column: written with the name, by the code that writes the name. */
export const nameKeyColumn = (columnName: string) => text(columnName).notNull();

/** The common tokens of the search index as one read of the stored list (search-common-grams.ts). */
export type CommonGrams = {
  /** Identifies one database's list; with `count`, one version of it. */
  key: string;
  count: number;
  grams: ReadonlySet<string>;
  /** Every prefix of MIN_LITERAL to GRAM - 1 characters of a common token. */
  prefixes: ReadonlySet<string>;
};

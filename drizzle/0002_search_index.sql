-- The configuration search index (src/modules/configs/search-index.ts): documents of 6-character windows written as
-- tokens (search-grams.ts), so any substring of 3 or more characters can be looked up; contentless (the text is in
-- config_blobs already) and detail=none (only which documents hold a token, not where), which is all a candidate
-- lookup needs and keeps the index small.
CREATE VIRTUAL TABLE `config_search` USING fts5(body, tokenize = 'ascii', content = '', contentless_delete = 1, detail = none);
--> statement-breakpoint
CREATE TRIGGER `config_search_docs_delete` AFTER DELETE ON `config_search_docs` BEGIN
  DELETE FROM `config_search` WHERE rowid = old.id;
END;

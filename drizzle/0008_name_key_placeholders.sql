-- SQLite cannot fold Unicode case, so the name keys (src/db/name-key.ts) of rows that existed before them are
-- computed at start by src/db/name-key-backfill.ts. Until then each holds a unique placeholder no name can fold
-- to (control characters are refused in names): char(1) and the row's id. The next migration makes the columns
-- NOT NULL and unique.
UPDATE `roles` SET `name_key` = char(1) || `id`;--> statement-breakpoint
UPDATE `users` SET `username_key` = char(1) || `id`, `email_key` = char(1) || `id`;--> statement-breakpoint
UPDATE `categories` SET `name_key` = char(1) || `id`;--> statement-breakpoint
UPDATE `credentials` SET `name_key` = char(1) || `id`;--> statement-breakpoint
UPDATE `device_profiles` SET `name_key` = char(1) || `id`;--> statement-breakpoint
UPDATE `tags` SET `name_key` = char(1) || `id`;--> statement-breakpoint
UPDATE `templates` SET `name_key` = char(1) || `id`;--> statement-breakpoint
UPDATE `vendors` SET `name_key` = char(1) || `id`;--> statement-breakpoint
UPDATE `devices` SET `name_key` = char(1) || `id`;--> statement-breakpoint
UPDATE `tasks` SET `name_key` = char(1) || `id`;

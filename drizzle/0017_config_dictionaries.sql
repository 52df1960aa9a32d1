CREATE TABLE `config_dictionaries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`command` text NOT NULL,
	`hash` text NOT NULL,
	`content` blob NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `config_blobs` ADD `dictionary_id` integer REFERENCES config_dictionaries(id);
CREATE TABLE `config_search_common_grams` (
	`id` integer PRIMARY KEY NOT NULL,
	`key` text NOT NULL,
	`count` integer NOT NULL,
	`grams` text NOT NULL
);
--> statement-breakpoint
DROP INDEX `config_search_docs_series_idx`;--> statement-breakpoint
CREATE INDEX `config_search_docs_device_idx` ON `config_search_docs` (`device_id`);--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_config_changes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`device_id` integer NOT NULL,
	`command` text NOT NULL,
	`config_id` integer NOT NULL,
	`previous_config_id` integer,
	`diff` text,
	`lines_added` integer NOT NULL,
	`lines_removed` integer NOT NULL,
	`trigger` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`config_id`) REFERENCES `configs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`previous_config_id`) REFERENCES `configs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
INSERT INTO `__new_config_changes`("id", "device_id", "command", "config_id", "previous_config_id", "diff", "lines_added", "lines_removed", "trigger", "created_at") SELECT "id", "device_id", "command", "config_id", "previous_config_id", "diff", "lines_added", "lines_removed", "trigger", "created_at" FROM `config_changes`;--> statement-breakpoint
DROP TABLE `config_changes`;--> statement-breakpoint
ALTER TABLE `__new_config_changes` RENAME TO `config_changes`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `config_changes_device_idx` ON `config_changes` (`device_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `config_changes_config_idx` ON `config_changes` (`config_id`);--> statement-breakpoint
ALTER TABLE `config_blobs` ADD `base_hash` text REFERENCES config_blobs(hash);--> statement-breakpoint
CREATE INDEX `config_blobs_base_idx` ON `config_blobs` (`base_hash`) WHERE "config_blobs"."base_hash" is not null;
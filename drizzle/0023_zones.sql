CREATE TABLE `collector_uploads` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`collector_id` integer NOT NULL,
	`upload_key` text NOT NULL,
	`job_id` integer,
	`answer` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`collector_id`) REFERENCES `remote_collectors`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `collector_uploads_key_idx` ON `collector_uploads` (`collector_id`,`upload_key`);--> statement-breakpoint
CREATE INDEX `collector_uploads_created_idx` ON `collector_uploads` (`created_at`);--> statement-breakpoint
CREATE TABLE `remote_collectors` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`zone_id` integer NOT NULL,
	`name` text NOT NULL,
	`public_key` text NOT NULL,
	`credential_hash` text NOT NULL,
	`revoked_at` integer,
	`last_seen_at` integer,
	`version` text DEFAULT '' NOT NULL,
	`sessions` integer DEFAULT 0 NOT NULL,
	`spool_bytes` integer DEFAULT 0 NOT NULL,
	`spool_dropped` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`zone_id`) REFERENCES `zones`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `remote_collectors_credential_idx` ON `remote_collectors` (`credential_hash`);--> statement-breakpoint
CREATE INDEX `remote_collectors_zone_idx` ON `remote_collectors` (`zone_id`);--> statement-breakpoint
CREATE TABLE `zone_tags` (
	`zone_id` integer NOT NULL,
	`tag_id` integer NOT NULL,
	PRIMARY KEY(`zone_id`, `tag_id`),
	FOREIGN KEY (`zone_id`) REFERENCES `zones`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tag_id`) REFERENCES `tags`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `zone_tags_tag_idx` ON `zone_tags` (`tag_id`);--> statement-breakpoint
CREATE TABLE `zones` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`mode` text DEFAULT 'local' NOT NULL,
	`enrollment_key_hash` text,
	`enrollment_key_created_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `zones_name_key_unique` ON `zones` (`name_key`);--> statement-breakpoint
CREATE INDEX `zones_enrollment_key_idx` ON `zones` (`enrollment_key_hash`);--> statement-breakpoint
ALTER TABLE `devices` ADD `zone_id` integer DEFAULT 1 NOT NULL REFERENCES zones(id);--> statement-breakpoint
CREATE INDEX `devices_zone_idx` ON `devices` (`zone_id`);
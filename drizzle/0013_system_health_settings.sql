CREATE TABLE `health_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`status` text NOT NULL,
	`trigger` text NOT NULL,
	`checks` text NOT NULL,
	`ran_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `health_runs_ran_at_idx` ON `health_runs` (`ran_at`);--> statement-breakpoint
CREATE TABLE `process_heartbeats` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`kind` text NOT NULL,
	`owner` text NOT NULL,
	`host` text NOT NULL,
	`pid` integer NOT NULL,
	`version` text NOT NULL,
	`concurrency` integer NOT NULL,
	`started_at` integer NOT NULL,
	`seen_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `process_heartbeats_owner_kind_idx` ON `process_heartbeats` (`owner`,`kind`);--> statement-breakpoint
CREATE TABLE `app_settings` (
	`id` integer PRIMARY KEY NOT NULL,
	`values` text NOT NULL,
	`smtp_password_enc` text,
	`updated_at` integer NOT NULL
);

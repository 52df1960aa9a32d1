CREATE TABLE `compare_exclusions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`pattern` text NOT NULL,
	`command` text,
	`ignore_case` integer DEFAULT false NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `web_sessions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`session_hash` text NOT NULL,
	`user_id` integer NOT NULL,
	`ip` text,
	`user_agent` text,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `web_sessions_hash_unique` ON `web_sessions` (`session_hash`);--> statement-breakpoint
CREATE INDEX `web_sessions_user_idx` ON `web_sessions` (`user_id`);--> statement-breakpoint
CREATE INDEX `web_sessions_expires_idx` ON `web_sessions` (`expires_at`);--> statement-breakpoint
CREATE TABLE `task_run_items` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` integer NOT NULL,
	`device_id` integer,
	`device_name` text,
	`job_id` integer,
	`skip_reason` text,
	FOREIGN KEY (`run_id`) REFERENCES `task_runs`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `task_run_items_run_idx` ON `task_run_items` (`run_id`);--> statement-breakpoint
CREATE INDEX `task_run_items_job_idx` ON `task_run_items` (`job_id`);--> statement-breakpoint
CREATE INDEX `task_run_items_device_idx` ON `task_run_items` (`device_id`);--> statement-breakpoint
CREATE TABLE `task_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`task_id` integer NOT NULL,
	`task_type` text NOT NULL,
	`trigger` text NOT NULL,
	`scheduled_for` integer,
	`missed_slots` integer DEFAULT 0 NOT NULL,
	`requested_by` integer,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`task_id`) REFERENCES `tasks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `task_runs_slot_unique` ON `task_runs` (`task_id`,`scheduled_for`);--> statement-breakpoint
CREATE INDEX `task_runs_started_idx` ON `task_runs` (`started_at`);--> statement-breakpoint
CREATE INDEX `task_runs_open_idx` ON `task_runs` (`finished_at`);--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`type` text NOT NULL,
	`device_ids` text DEFAULT '[]' NOT NULL,
	`category_ids` text DEFAULT '[]' NOT NULL,
	`tag_ids` text DEFAULT '[]' NOT NULL,
	`cron` text NOT NULL,
	`timezone` text DEFAULT 'UTC' NOT NULL,
	`paused` integer DEFAULT false NOT NULL,
	`notify_on_failure` integer DEFAULT false NOT NULL,
	`schedule_from` integer NOT NULL,
	`system_key` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tasks_name_unique` ON `tasks` (lower("name"));--> statement-breakpoint
CREATE UNIQUE INDEX `tasks_system_key_unique` ON `tasks` (`system_key`);--> statement-breakpoint
CREATE TABLE `config_retention_policy` (
	`id` integer PRIMARY KEY NOT NULL,
	`keep_days` integer,
	`keep_versions` integer,
	`updated_at` integer
);
--> statement-breakpoint
CREATE TABLE `config_search_docs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`device_id` integer NOT NULL,
	`command` text NOT NULL,
	`config_id` integer NOT NULL,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `config_search_docs_series_idx` ON `config_search_docs` (`device_id`,`command`,`config_id`);
CREATE TABLE `snippet_deployment_devices` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`deployment_id` integer NOT NULL,
	`device_id` integer,
	`device_name` text NOT NULL,
	`position` integer NOT NULL,
	`lines` text NOT NULL,
	`rollback_lines` text DEFAULT '[]' NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`job_id` integer,
	`message` text,
	`result` text,
	`transcript` text,
	`finished_at` integer,
	FOREIGN KEY (`deployment_id`) REFERENCES `snippet_deployments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `snippet_deployment_devices_deployment_idx` ON `snippet_deployment_devices` (`deployment_id`,`position`);--> statement-breakpoint
CREATE INDEX `snippet_deployment_devices_job_idx` ON `snippet_deployment_devices` (`job_id`);--> statement-breakpoint
CREATE TABLE `snippet_deployments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`snippet_id` integer,
	`snippet_name` text NOT NULL,
	`kind` text NOT NULL,
	`task_run_id` integer,
	`state` text DEFAULT 'running' NOT NULL,
	`canary` integer DEFAULT 0 NOT NULL,
	`stop_on_failure` integer DEFAULT false NOT NULL,
	`concurrency` integer NOT NULL,
	`stopped_reason` text,
	`requested_by` integer,
	`created_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`snippet_id`) REFERENCES `snippets`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`task_run_id`) REFERENCES `task_runs`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE TABLE `snippets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`content` text NOT NULL,
	`rollback_content` text DEFAULT '' NOT NULL,
	`template_ids` text DEFAULT '[]' NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `snippets_name_key_unique` ON `snippets` (`name_key`);--> statement-breakpoint
ALTER TABLE `tasks` ADD `snippet_id` integer REFERENCES snippets(id);--> statement-breakpoint
ALTER TABLE `tasks` ADD `snippet_options` text;
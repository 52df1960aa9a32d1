CREATE TABLE `device_counts` (
	`enabled` integer NOT NULL,
	`status` text NOT NULL,
	`backed_up` integer NOT NULL,
	`last_download` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`enabled`, `status`, `backed_up`, `last_download`)
);
--> statement-breakpoint
ALTER TABLE `devices` ADD `last_download_job_id` integer;--> statement-breakpoint
ALTER TABLE `devices` ADD `last_download_outcome` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `last_download_at` integer;--> statement-breakpoint
CREATE INDEX `devices_last_backup_idx` ON `devices` (`last_backup_at`);--> statement-breakpoint
CREATE INDEX `devices_last_download_idx` ON `devices` (`last_download_at`);--> statement-breakpoint
CREATE INDEX `devices_failing_idx` ON `devices` (`last_download_at`) WHERE "devices"."enabled" = 1 and "devices"."last_download_outcome" not in ('success', 'unchanged');
ALTER TABLE `task_runs` ADD `counts` text;--> statement-breakpoint
CREATE INDEX `devices_name_lower_idx` ON `devices` (lower("name"));--> statement-breakpoint
CREATE INDEX `devices_status_idx` ON `devices` (`status`);
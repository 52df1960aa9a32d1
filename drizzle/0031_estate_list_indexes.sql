DROP INDEX `devices_status_idx`;--> statement-breakpoint
CREATE INDEX `devices_created_idx` ON `devices` (`created_at`);--> statement-breakpoint
CREATE INDEX `devices_status_idx` ON `devices` (`status`,`enabled`,`last_backup_at`);--> statement-breakpoint
DROP INDEX `jobs_finished_at_idx`;--> statement-breakpoint
CREATE INDEX `jobs_finished_at_idx` ON `jobs` (`finished_at`,`type`,`state`,`outcome`,`device_id`);--> statement-breakpoint
DROP INDEX `config_changes_created_idx`;--> statement-breakpoint
CREATE INDEX `config_changes_created_idx` ON `config_changes` (`created_at`,`device_id`);
CREATE INDEX `devices_name_lower_idx` ON `devices` (lower("name"));--> statement-breakpoint
CREATE INDEX `devices_status_idx` ON `devices` (`status`);
ALTER TABLE `config_changes` ADD `changed_by` text;--> statement-breakpoint
ALTER TABLE `process_heartbeats` ADD `details` text;
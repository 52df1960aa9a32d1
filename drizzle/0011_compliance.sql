CREATE TABLE `compliance_pending` (
	`config_id` integer PRIMARY KEY NOT NULL,
	`device_id` integer NOT NULL,
	`command` text NOT NULL,
	FOREIGN KEY (`config_id`) REFERENCES `configs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `compliance_results` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`assignment_id` integer NOT NULL,
	`policy_id` integer NOT NULL,
	`device_id` integer NOT NULL,
	`command` text NOT NULL,
	`config_id` integer,
	`config_version` integer,
	`policy_hash` text NOT NULL,
	`status` text NOT NULL,
	`score` integer NOT NULL,
	`passed_rules` integer NOT NULL,
	`total_rules` integer NOT NULL,
	`rules` text NOT NULL,
	`evaluated_at` integer NOT NULL,
	FOREIGN KEY (`assignment_id`) REFERENCES `policy_assignments`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`policy_id`) REFERENCES `policies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `compliance_results_version_unique` ON `compliance_results` (`assignment_id`,`device_id`,`config_id`,`policy_hash`) WHERE "compliance_results"."config_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX `compliance_results_unevaluated_unique` ON `compliance_results` (`assignment_id`,`device_id`,`policy_hash`) WHERE "compliance_results"."config_id" is null;--> statement-breakpoint
CREATE INDEX `compliance_results_device_idx` ON `compliance_results` (`device_id`,`assignment_id`,`evaluated_at`);--> statement-breakpoint
CREATE INDEX `compliance_results_policy_idx` ON `compliance_results` (`policy_id`,`evaluated_at`);--> statement-breakpoint
CREATE INDEX `compliance_results_evaluated_idx` ON `compliance_results` (`evaluated_at`);--> statement-breakpoint
CREATE TABLE `policies` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`vendor` text DEFAULT '' NOT NULL,
	`definition` text NOT NULL,
	`definition_hash` text NOT NULL,
	`builtin_key` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `policies_name_key_unique` ON `policies` (`name_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `policies_builtin_key_unique` ON `policies` (`builtin_key`);--> statement-breakpoint
CREATE TABLE `policy_assignments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`policy_id` integer NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`scope` text NOT NULL,
	`device_ids` text DEFAULT '[]' NOT NULL,
	`category_ids` text DEFAULT '[]' NOT NULL,
	`tag_ids` text DEFAULT '[]' NOT NULL,
	`command` text,
	`enabled` integer DEFAULT true NOT NULL,
	`run_on_backup` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`policy_id`) REFERENCES `policies`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `policy_assignments_policy_idx` ON `policy_assignments` (`policy_id`);--> statement-breakpoint
ALTER TABLE `jobs` ADD `params` text;
CREATE TABLE `discovery_candidates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`address` text NOT NULL,
	`port` integer NOT NULL,
	`protocol` text NOT NULL,
	`cred_id` integer,
	`template_id` integer,
	`vendor` text,
	`model` text,
	`os_version` text,
	`serial` text,
	`hostname` text,
	`problem` text,
	`state` text DEFAULT 'pending' NOT NULL,
	`device_id` integer,
	`preset_id` integer,
	`found_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`cred_id`) REFERENCES `credentials`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`template_id`) REFERENCES `templates`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`preset_id`) REFERENCES `scan_presets`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `discovery_candidates_address_unique` ON `discovery_candidates` (`address`);--> statement-breakpoint
CREATE INDEX `discovery_candidates_state_idx` ON `discovery_candidates` (`state`);--> statement-breakpoint
CREATE TABLE `discovery_tries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`address` text NOT NULL,
	`cred_id` integer,
	`tried_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `discovery_tries_address_idx` ON `discovery_tries` (`address`,`tried_at`);--> statement-breakpoint
CREATE TABLE `scan_presets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`targets` text NOT NULL,
	`ports` text NOT NULL,
	`cred_ids` text NOT NULL,
	`adopt` integer DEFAULT false NOT NULL,
	`connects_per_second` integer DEFAULT 50 NOT NULL,
	`max_connects` integer DEFAULT 20000 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `scan_presets_name_unique` ON `scan_presets` (`name`);--> statement-breakpoint
ALTER TABLE `credentials` ADD `discovery` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `devices` ADD `discover_credentials` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `devices` ADD `serial` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `os_version` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `hostname` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `inventory_at` integer;--> statement-breakpoint
ALTER TABLE `tasks` ADD `scan_preset_id` integer REFERENCES scan_presets(id);
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_roles` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`builtin` integer DEFAULT false NOT NULL,
	`permissions` text NOT NULL,
	`scope_all` integer DEFAULT true NOT NULL,
	`scope_tag_ids` text DEFAULT '[]' NOT NULL,
	`scope_category_ids` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_roles`("id", "name", "name_key", "description", "builtin", "permissions", "scope_all", "scope_tag_ids", "scope_category_ids", "created_at", "updated_at") SELECT "id", "name", "name_key", "description", "builtin", "permissions", "scope_all", "scope_tag_ids", "scope_category_ids", "created_at", "updated_at" FROM `roles`;--> statement-breakpoint
DROP TABLE `roles`;--> statement-breakpoint
ALTER TABLE `__new_roles` RENAME TO `roles`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `roles_name_key_unique` ON `roles` (`name_key`);--> statement-breakpoint
CREATE TABLE `__new_users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`username_key` text NOT NULL,
	`email` text NOT NULL,
	`email_key` text NOT NULL,
	`password_hash` text NOT NULL,
	`role_id` integer NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`last_login_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_users`("id", "username", "username_key", "email", "email_key", "password_hash", "role_id", "enabled", "last_login_at", "created_at", "updated_at") SELECT "id", "username", "username_key", "email", "email_key", "password_hash", "role_id", "enabled", "last_login_at", "created_at", "updated_at" FROM `users`;--> statement-breakpoint
DROP TABLE `users`;--> statement-breakpoint
ALTER TABLE `__new_users` RENAME TO `users`;--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_key_unique` ON `users` (`username_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_key_unique` ON `users` (`email_key`);--> statement-breakpoint
CREATE TABLE `__new_categories` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_categories`("id", "name", "name_key", "description", "created_at", "updated_at") SELECT "id", "name", "name_key", "description", "created_at", "updated_at" FROM `categories`;--> statement-breakpoint
DROP TABLE `categories`;--> statement-breakpoint
ALTER TABLE `__new_categories` RENAME TO `categories`;--> statement-breakpoint
CREATE UNIQUE INDEX `categories_name_key_unique` ON `categories` (`name_key`);--> statement-breakpoint
CREATE TABLE `__new_credentials` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`username` text DEFAULT '' NOT NULL,
	`password_enc` text,
	`enable_password_enc` text,
	`ssh_key_enc` text,
	`ssh_key_passphrase_enc` text,
	`snmp_community_enc` text,
	`snmp_v3_user` text,
	`snmp_v3_auth_protocol` text,
	`snmp_v3_auth_password_enc` text,
	`snmp_v3_priv_protocol` text,
	`snmp_v3_priv_password_enc` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_credentials`("id", "name", "name_key", "description", "username", "password_enc", "enable_password_enc", "ssh_key_enc", "ssh_key_passphrase_enc", "snmp_community_enc", "snmp_v3_user", "snmp_v3_auth_protocol", "snmp_v3_auth_password_enc", "snmp_v3_priv_protocol", "snmp_v3_priv_password_enc", "created_at", "updated_at") SELECT "id", "name", "name_key", "description", "username", "password_enc", "enable_password_enc", "ssh_key_enc", "ssh_key_passphrase_enc", "snmp_community_enc", "snmp_v3_user", "snmp_v3_auth_protocol", "snmp_v3_auth_password_enc", "snmp_v3_priv_protocol", "snmp_v3_priv_password_enc", "created_at", "updated_at" FROM `credentials`;--> statement-breakpoint
DROP TABLE `credentials`;--> statement-breakpoint
ALTER TABLE `__new_credentials` RENAME TO `credentials`;--> statement-breakpoint
CREATE UNIQUE INDEX `credentials_name_key_unique` ON `credentials` (`name_key`);--> statement-breakpoint
CREATE TABLE `__new_device_profiles` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`vendor_id` integer,
	`template_id` integer,
	`category_id` integer,
	`cred_id` integer,
	`snippet_cred_id` integer,
	`port` integer,
	`tag_ids` text DEFAULT '[]' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`vendor_id`) REFERENCES `vendors`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`template_id`) REFERENCES `templates`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`category_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`cred_id`) REFERENCES `credentials`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`snippet_cred_id`) REFERENCES `credentials`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
INSERT INTO `__new_device_profiles`("id", "name", "name_key", "description", "vendor_id", "template_id", "category_id", "cred_id", "snippet_cred_id", "port", "tag_ids", "created_at", "updated_at") SELECT "id", "name", "name_key", "description", "vendor_id", "template_id", "category_id", "cred_id", "snippet_cred_id", "port", "tag_ids", "created_at", "updated_at" FROM `device_profiles`;--> statement-breakpoint
DROP TABLE `device_profiles`;--> statement-breakpoint
ALTER TABLE `__new_device_profiles` RENAME TO `device_profiles`;--> statement-breakpoint
CREATE UNIQUE INDEX `device_profiles_name_key_unique` ON `device_profiles` (`name_key`);--> statement-breakpoint
CREATE TABLE `__new_tags` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`color` text DEFAULT '#6b7280' NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_tags`("id", "name", "name_key", "color", "description", "created_at", "updated_at") SELECT "id", "name", "name_key", "color", "description", "created_at", "updated_at" FROM `tags`;--> statement-breakpoint
DROP TABLE `tags`;--> statement-breakpoint
ALTER TABLE `__new_tags` RENAME TO `tags`;--> statement-breakpoint
CREATE UNIQUE INDEX `tags_name_key_unique` ON `tags` (`name_key`);--> statement-breakpoint
CREATE TABLE `__new_templates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`code` text NOT NULL,
	`builtin_key` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_templates`("id", "name", "name_key", "description", "code", "builtin_key", "created_at", "updated_at") SELECT "id", "name", "name_key", "description", "code", "builtin_key", "created_at", "updated_at" FROM `templates`;--> statement-breakpoint
DROP TABLE `templates`;--> statement-breakpoint
ALTER TABLE `__new_templates` RENAME TO `templates`;--> statement-breakpoint
CREATE UNIQUE INDEX `templates_name_key_unique` ON `templates` (`name_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `templates_builtin_key_unique` ON `templates` (`builtin_key`);--> statement-breakpoint
CREATE TABLE `__new_vendors` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `__new_vendors`("id", "name", "name_key", "created_at", "updated_at") SELECT "id", "name", "name_key", "created_at", "updated_at" FROM `vendors`;--> statement-breakpoint
DROP TABLE `vendors`;--> statement-breakpoint
ALTER TABLE `__new_vendors` RENAME TO `vendors`;--> statement-breakpoint
CREATE UNIQUE INDEX `vendors_name_key_unique` ON `vendors` (`name_key`);--> statement-breakpoint
CREATE TABLE `__new_devices` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`ip` text NOT NULL,
	`vendor_id` integer,
	`model` text DEFAULT '' NOT NULL,
	`category_id` integer,
	`template_id` integer,
	`cred_id` integer,
	`snippet_cred_id` integer,
	`port_override` integer,
	`profile_id` integer,
	`username` text DEFAULT '' NOT NULL,
	`password_enc` text,
	`enable_password_enc` text,
	`custom` text DEFAULT '{}' NOT NULL,
	`notes` text DEFAULT '' NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`status` text DEFAULT 'unknown' NOT NULL,
	`host_key_fingerprint` text,
	`last_seen_at` integer,
	`last_backup_at` integer,
	`snmp_config_changed_value` text,
	`snmp_config_changed_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`vendor_id`) REFERENCES `vendors`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`category_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`template_id`) REFERENCES `templates`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`cred_id`) REFERENCES `credentials`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`snippet_cred_id`) REFERENCES `credentials`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`profile_id`) REFERENCES `device_profiles`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
INSERT INTO `__new_devices`("id", "name", "name_key", "ip", "vendor_id", "model", "category_id", "template_id", "cred_id", "snippet_cred_id", "port_override", "profile_id", "username", "password_enc", "enable_password_enc", "custom", "notes", "enabled", "status", "host_key_fingerprint", "last_seen_at", "last_backup_at", "snmp_config_changed_value", "snmp_config_changed_at", "created_at", "updated_at") SELECT "id", "name", "name_key", "ip", "vendor_id", "model", "category_id", "template_id", "cred_id", "snippet_cred_id", "port_override", "profile_id", "username", "password_enc", "enable_password_enc", "custom", "notes", "enabled", "status", "host_key_fingerprint", "last_seen_at", "last_backup_at", "snmp_config_changed_value", "snmp_config_changed_at", "created_at", "updated_at" FROM `devices`;--> statement-breakpoint
DROP TABLE `devices`;--> statement-breakpoint
ALTER TABLE `__new_devices` RENAME TO `devices`;--> statement-breakpoint
CREATE UNIQUE INDEX `devices_name_key_unique` ON `devices` (`name_key`);--> statement-breakpoint
CREATE INDEX `devices_vendor_idx` ON `devices` (`vendor_id`);--> statement-breakpoint
CREATE INDEX `devices_category_idx` ON `devices` (`category_id`);--> statement-breakpoint
CREATE INDEX `devices_cred_idx` ON `devices` (`cred_id`);--> statement-breakpoint
CREATE TABLE `__new_tasks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
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
INSERT INTO `__new_tasks`("id", "name", "name_key", "description", "type", "device_ids", "category_ids", "tag_ids", "cron", "timezone", "paused", "notify_on_failure", "schedule_from", "system_key", "created_at", "updated_at") SELECT "id", "name", "name_key", "description", "type", "device_ids", "category_ids", "tag_ids", "cron", "timezone", "paused", "notify_on_failure", "schedule_from", "system_key", "created_at", "updated_at" FROM `tasks`;--> statement-breakpoint
DROP TABLE `tasks`;--> statement-breakpoint
ALTER TABLE `__new_tasks` RENAME TO `tasks`;--> statement-breakpoint
CREATE UNIQUE INDEX `tasks_name_key_unique` ON `tasks` (`name_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `tasks_system_key_unique` ON `tasks` (`system_key`);
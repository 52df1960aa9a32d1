ALTER TABLE `users` ADD `auth_source` text DEFAULT 'local' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `directory_checked_at` integer;--> statement-breakpoint
ALTER TABLE `app_settings` ADD `ldap_bind_password_enc` text;
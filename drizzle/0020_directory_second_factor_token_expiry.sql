ALTER TABLE `api_tokens` ADD `expiry_warned_at` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `auth_source` text DEFAULT 'local' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `directory_checked_at` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `totp_secret_enc` text;--> statement-breakpoint
ALTER TABLE `users` ADD `totp_pending_enc` text;--> statement-breakpoint
ALTER TABLE `users` ADD `totp_last_step` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `recovery_code_hashes` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `web_sessions` ADD `second_factor_pending` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `app_settings` ADD `ldap_bind_password_enc` text;
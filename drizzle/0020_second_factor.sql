ALTER TABLE `users` ADD `totp_secret_enc` text;--> statement-breakpoint
ALTER TABLE `users` ADD `totp_pending_enc` text;--> statement-breakpoint
ALTER TABLE `users` ADD `totp_last_step` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `recovery_code_hashes` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `web_sessions` ADD `second_factor_pending` integer DEFAULT false NOT NULL;
CREATE TABLE `app_settings` (
	`id` integer PRIMARY KEY NOT NULL,
	`values` text NOT NULL,
	`smtp_password_enc` text,
	`updated_at` integer NOT NULL
);

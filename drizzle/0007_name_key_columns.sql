ALTER TABLE `roles` ADD `name_key` text;--> statement-breakpoint
ALTER TABLE `users` ADD `username_key` text;--> statement-breakpoint
ALTER TABLE `users` ADD `email_key` text;--> statement-breakpoint
ALTER TABLE `categories` ADD `name_key` text;--> statement-breakpoint
ALTER TABLE `credentials` ADD `name_key` text;--> statement-breakpoint
ALTER TABLE `device_profiles` ADD `name_key` text;--> statement-breakpoint
ALTER TABLE `tags` ADD `name_key` text;--> statement-breakpoint
ALTER TABLE `templates` ADD `name_key` text;--> statement-breakpoint
ALTER TABLE `vendors` ADD `name_key` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `name_key` text;--> statement-breakpoint
ALTER TABLE `tasks` ADD `name_key` text;
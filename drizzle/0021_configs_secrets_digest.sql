ALTER TABLE `configs` ADD `secrets_digest` text;--> statement-breakpoint
ALTER TABLE `configs` ADD `secrets_changed` integer DEFAULT false NOT NULL;
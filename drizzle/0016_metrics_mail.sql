CREATE TABLE `mail_subscriptions` (
	`user_id` integer PRIMARY KEY NOT NULL,
	`task_failures` integer DEFAULT false NOT NULL,
	`config_changes` integer DEFAULT false NOT NULL,
	`config_change_tag_ids` text DEFAULT '[]' NOT NULL,
	`compliance_failures` integer DEFAULT false NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `jobs_finished_at_idx` ON `jobs` (`finished_at`);
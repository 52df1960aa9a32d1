CREATE TABLE `compliance_current` (
	`device_id` integer NOT NULL,
	`assignment_id` integer NOT NULL,
	`result_id` integer NOT NULL,
	`evaluated_at` integer NOT NULL,
	PRIMARY KEY(`device_id`, `assignment_id`)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `compliance_current_result_idx` ON `compliance_current` (`result_id`);
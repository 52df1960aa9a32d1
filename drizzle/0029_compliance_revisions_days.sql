CREATE TABLE `compliance_days` (
	`day_end` integer NOT NULL,
	`policy_id` integer NOT NULL,
	`devices` integer NOT NULL,
	`compliant` integer NOT NULL,
	`not_compliant` integer NOT NULL,
	`not_evaluated` integer NOT NULL,
	`failing_rules` text NOT NULL,
	PRIMARY KEY(`day_end`, `policy_id`)
);
--> statement-breakpoint
CREATE TABLE `policy_revisions` (
	`hash` text PRIMARY KEY NOT NULL,
	`rules` text NOT NULL
);

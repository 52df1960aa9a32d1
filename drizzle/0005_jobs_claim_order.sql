DROP INDEX `jobs_claim_idx`;--> statement-breakpoint
CREATE INDEX `jobs_claim_order_idx` ON `jobs` (`state`,"priority" desc,`id`);
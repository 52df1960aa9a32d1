ALTER TABLE `config_blobs` ADD `id` integer;--> statement-breakpoint
ALTER TABLE `config_blobs` ADD `base_id` integer REFERENCES config_blobs(id);--> statement-breakpoint
CREATE INDEX `config_blobs_base_id_idx` ON `config_blobs` (`base_id`) WHERE "config_blobs"."base_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX `config_blobs_id_unique` ON `config_blobs` (`id`);
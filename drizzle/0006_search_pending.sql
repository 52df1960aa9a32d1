CREATE TABLE `config_search_pending` (
	`config_id` integer PRIMARY KEY NOT NULL,
	`device_id` integer NOT NULL,
	`command` text NOT NULL,
	FOREIGN KEY (`config_id`) REFERENCES `configs`(`id`) ON UPDATE no action ON DELETE cascade
);

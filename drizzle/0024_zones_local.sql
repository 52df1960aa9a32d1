-- The zone the collectors beside the API poll; every device of an upgraded database is in it (devices.zone_id's default).
INSERT OR IGNORE INTO `zones` (`id`, `name`, `name_key`, `description`, `mode`, `created_at`, `updated_at`)
VALUES (1, 'local', 'local', 'Devices the collectors beside the API reach', 'local', CAST(strftime('%s','now') AS integer) * 1000, CAST(strftime('%s','now') AS integer) * 1000);

-- Only a series' latest version's significant hash is ever compared (src/db/schema/configs.ts): older versions keep none.
UPDATE `configs` SET `significant_hash` = '' WHERE `version` < (SELECT max(c2.`version`) FROM `configs` c2 WHERE c2.`device_id` = `configs`.`device_id` AND c2.`command` = `configs`.`command`);

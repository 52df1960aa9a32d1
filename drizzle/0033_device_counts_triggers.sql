-- Each device's newest finished download that was attempted (not cancelled), kept on the device by triggers on
-- jobs: a job finishing, going back to the queue, arriving finished or deleted (the retention purge deletes failed
-- ones) sets it again from the device's jobs, one search of jobs_device_idx, as the dashboard did for every device
-- on every read.
UPDATE `devices` SET (`last_download_job_id`, `last_download_outcome`, `last_download_at`) = (
  SELECT j.`id`, j.`outcome`, j.`finished_at` FROM `jobs` j
  WHERE j.`device_id` = `devices`.`id` AND j.`state` = 'finished' AND j.`type` = 'download' AND j.`outcome` <> 'cancelled'
  ORDER BY j.`id` DESC LIMIT 1
);
--> statement-breakpoint
CREATE TRIGGER `devices_last_download_job_added` AFTER INSERT ON `jobs`
WHEN NEW.`type` = 'download' AND NEW.`state` = 'finished' AND NEW.`device_id` IS NOT NULL BEGIN
  UPDATE `devices` SET (`last_download_job_id`, `last_download_outcome`, `last_download_at`) = (
    SELECT j.`id`, j.`outcome`, j.`finished_at` FROM `jobs` j
    WHERE j.`device_id` = NEW.`device_id` AND j.`state` = 'finished' AND j.`type` = 'download' AND j.`outcome` <> 'cancelled'
    ORDER BY j.`id` DESC LIMIT 1
  ) WHERE `id` = NEW.`device_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `devices_last_download_job_changed` AFTER UPDATE OF `state`, `outcome`, `type`, `device_id` ON `jobs`
WHEN (NEW.`type` = 'download' AND NEW.`state` = 'finished') OR (OLD.`type` = 'download' AND OLD.`state` = 'finished') BEGIN
  UPDATE `devices` SET (`last_download_job_id`, `last_download_outcome`, `last_download_at`) = (
    SELECT j.`id`, j.`outcome`, j.`finished_at` FROM `jobs` j
    WHERE j.`device_id` = `devices`.`id` AND j.`state` = 'finished' AND j.`type` = 'download' AND j.`outcome` <> 'cancelled'
    ORDER BY j.`id` DESC LIMIT 1
  ) WHERE `id` IN (NEW.`device_id`, OLD.`device_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `devices_last_download_job_deleted` AFTER DELETE ON `jobs`
WHEN OLD.`type` = 'download' AND OLD.`state` = 'finished' AND OLD.`device_id` IS NOT NULL BEGIN
  UPDATE `devices` SET (`last_download_job_id`, `last_download_outcome`, `last_download_at`) = (
    SELECT j.`id`, j.`outcome`, j.`finished_at` FROM `jobs` j
    WHERE j.`device_id` = OLD.`device_id` AND j.`state` = 'finished' AND j.`type` = 'download' AND j.`outcome` <> 'cancelled'
    ORDER BY j.`id` DESC LIMIT 1
  ) WHERE `id` = OLD.`device_id`;
END;
--> statement-breakpoint
-- How many devices are in each state (src/db/schema/devices.ts: device_counts), counted once here and kept by the
-- triggers below on every insert, delete and change of what they count, whichever path writes the device.
INSERT INTO `device_counts` (`enabled`, `status`, `backed_up`, `last_download`, `n`)
SELECT `enabled`, `status`, `last_backup_at` IS NOT NULL,
  CASE WHEN `last_download_outcome` IS NULL THEN 'none' WHEN `last_download_outcome` IN ('success', 'unchanged') THEN 'good' ELSE 'bad' END,
  count(*)
FROM `devices` GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
CREATE TRIGGER `device_counts_device_added` AFTER INSERT ON `devices` BEGIN
  INSERT INTO `device_counts` (`enabled`, `status`, `backed_up`, `last_download`, `n`) VALUES (
    NEW.`enabled`, NEW.`status`, NEW.`last_backup_at` IS NOT NULL,
    CASE WHEN NEW.`last_download_outcome` IS NULL THEN 'none' WHEN NEW.`last_download_outcome` IN ('success', 'unchanged') THEN 'good' ELSE 'bad' END,
    1
  ) ON CONFLICT (`enabled`, `status`, `backed_up`, `last_download`) DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `device_counts_device_deleted` AFTER DELETE ON `devices` BEGIN
  UPDATE `device_counts` SET `n` = `n` - 1
  WHERE `enabled` = OLD.`enabled` AND `status` = OLD.`status` AND `backed_up` = (OLD.`last_backup_at` IS NOT NULL)
    AND `last_download` = CASE WHEN OLD.`last_download_outcome` IS NULL THEN 'none' WHEN OLD.`last_download_outcome` IN ('success', 'unchanged') THEN 'good' ELSE 'bad' END;
END;
--> statement-breakpoint
CREATE TRIGGER `device_counts_device_changed` AFTER UPDATE OF `enabled`, `status`, `last_backup_at`, `last_download_outcome` ON `devices`
WHEN OLD.`enabled` IS NOT NEW.`enabled` OR OLD.`status` IS NOT NEW.`status`
  OR (OLD.`last_backup_at` IS NULL) IS NOT (NEW.`last_backup_at` IS NULL)
  OR OLD.`last_download_outcome` IS NOT NEW.`last_download_outcome` BEGIN
  UPDATE `device_counts` SET `n` = `n` - 1
  WHERE `enabled` = OLD.`enabled` AND `status` = OLD.`status` AND `backed_up` = (OLD.`last_backup_at` IS NOT NULL)
    AND `last_download` = CASE WHEN OLD.`last_download_outcome` IS NULL THEN 'none' WHEN OLD.`last_download_outcome` IN ('success', 'unchanged') THEN 'good' ELSE 'bad' END;
  INSERT INTO `device_counts` (`enabled`, `status`, `backed_up`, `last_download`, `n`) VALUES (
    NEW.`enabled`, NEW.`status`, NEW.`last_backup_at` IS NOT NULL,
    CASE WHEN NEW.`last_download_outcome` IS NULL THEN 'none' WHEN NEW.`last_download_outcome` IN ('success', 'unchanged') THEN 'good' ELSE 'bad' END,
    1
  ) ON CONFLICT (`enabled`, `status`, `backed_up`, `last_download`) DO UPDATE SET `n` = `n` + 1;
END;

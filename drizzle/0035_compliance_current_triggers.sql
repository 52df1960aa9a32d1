-- Each (assignment, device) pair's current result (src/db/schema/compliance.ts: compliance_current): found once
-- here, then kept by the triggers below on every insert, delete and change of a result.
INSERT INTO `compliance_current` (`device_id`, `assignment_id`, `result_id`, `evaluated_at`)
SELECT r.`device_id`, r.`assignment_id`, r.`id`, r.`evaluated_at` FROM `compliance_results` r
WHERE r.`id` = (
  SELECT r2.`id` FROM `compliance_results` r2 WHERE r2.`device_id` = r.`device_id` AND r2.`assignment_id` = r.`assignment_id`
  ORDER BY r2.`evaluated_at` DESC, r2.`id` DESC LIMIT 1
);
--> statement-breakpoint
CREATE TRIGGER `compliance_current_result_added` AFTER INSERT ON `compliance_results` BEGIN
  INSERT INTO `compliance_current` (`device_id`, `assignment_id`, `result_id`, `evaluated_at`)
  VALUES (NEW.`device_id`, NEW.`assignment_id`, NEW.`id`, NEW.`evaluated_at`)
  ON CONFLICT (`device_id`, `assignment_id`) DO UPDATE SET `result_id` = excluded.`result_id`, `evaluated_at` = excluded.`evaluated_at`
  WHERE excluded.`evaluated_at` > `compliance_current`.`evaluated_at`
    OR (excluded.`evaluated_at` = `compliance_current`.`evaluated_at` AND excluded.`result_id` > `compliance_current`.`result_id`);
END;
--> statement-breakpoint
-- A deleted current result (its device or assignment deleted, or a purge) hands over to its pair's newest left.
CREATE TRIGGER `compliance_current_result_deleted` AFTER DELETE ON `compliance_results`
WHEN OLD.`id` IN (SELECT `result_id` FROM `compliance_current`) BEGIN
  DELETE FROM `compliance_current` WHERE `result_id` = OLD.`id`;
  INSERT INTO `compliance_current` (`device_id`, `assignment_id`, `result_id`, `evaluated_at`)
  SELECT r2.`device_id`, r2.`assignment_id`, r2.`id`, r2.`evaluated_at` FROM `compliance_results` r2
  WHERE r2.`device_id` = OLD.`device_id` AND r2.`assignment_id` = OLD.`assignment_id`
  ORDER BY r2.`evaluated_at` DESC, r2.`id` DESC LIMIT 1;
END;
--> statement-breakpoint
CREATE TRIGGER `compliance_current_result_changed` AFTER UPDATE OF `device_id`, `assignment_id`, `evaluated_at` ON `compliance_results` BEGIN
  DELETE FROM `compliance_current`
  WHERE (`device_id` = OLD.`device_id` AND `assignment_id` = OLD.`assignment_id`)
    OR (`device_id` = NEW.`device_id` AND `assignment_id` = NEW.`assignment_id`);
  INSERT INTO `compliance_current` (`device_id`, `assignment_id`, `result_id`, `evaluated_at`)
  SELECT r2.`device_id`, r2.`assignment_id`, r2.`id`, r2.`evaluated_at` FROM `compliance_results` r2
  WHERE r2.`id` IN (
    (SELECT r3.`id` FROM `compliance_results` r3 WHERE r3.`device_id` = OLD.`device_id` AND r3.`assignment_id` = OLD.`assignment_id`
      ORDER BY r3.`evaluated_at` DESC, r3.`id` DESC LIMIT 1),
    (SELECT r3.`id` FROM `compliance_results` r3 WHERE r3.`device_id` = NEW.`device_id` AND r3.`assignment_id` = NEW.`assignment_id`
      ORDER BY r3.`evaluated_at` DESC, r3.`id` DESC LIMIT 1)
  );
END;

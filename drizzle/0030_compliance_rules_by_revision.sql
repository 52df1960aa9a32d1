-- Results stored before policy_revisions existed: each revision's rule descriptions and methods once (from its
-- first result), and each result's rules in the compact form of src/modules/compliance/stored-rules.ts.
INSERT OR IGNORE INTO `policy_revisions` (`hash`, `rules`)
SELECT r.`policy_hash`, (
  SELECT json_group_array(json_object(
    'index', json_extract(x.value, '$.index'),
    'description', json_extract(x.value, '$.description'),
    'method', json_extract(x.value, '$.method')))
  FROM json_each(r.`rules`) x)
FROM `compliance_results` r
WHERE r.`id` IN (
  SELECT min(`id`) FROM `compliance_results` WHERE json_array_length(`rules`) > 0 GROUP BY `policy_hash`);
--> statement-breakpoint
UPDATE `compliance_results` SET `rules` = (
  SELECT json_group_array(json_patch(
    json_object('p', CASE WHEN json_extract(x.value, '$.passed') THEN 1 ELSE 0 END),
    json_object(
      'e', CASE WHEN json_array_length(x.value, '$.evidence') > 0 THEN json((
        SELECT json_group_array(CASE WHEN json_type(e.value, '$.section') IS NULL
          THEN json_array(json_extract(e.value, '$.line'), json_extract(e.value, '$.text'))
          ELSE json_array(json_extract(e.value, '$.line'), json_extract(e.value, '$.text'), json_extract(e.value, '$.section'))
          END)
        FROM json_each(x.value, '$.evidence') e)) END,
      'r', json(json_extract(x.value, '$.remediation')),
      'o', json_extract(x.value, '$.omitted'),
      'c', json_extract(x.value, '$.sectionsChecked'),
      's', CASE WHEN json_array_length(x.value, '$.sections') > 0 THEN json((
        SELECT json_group_array(json_array(json_extract(s.value, '$.line'), json_extract(s.value, '$.header')))
        FROM json_each(x.value, '$.sections') s)) END)))
  FROM json_each(`compliance_results`.`rules`) x)
WHERE json_array_length(`rules`) > 0;
--> statement-breakpoint
-- A day's roll-up holds while no result made before its end is written or deleted: these delete the days one
-- changes (src/modules/compliance/daily.ts computes them again when asked).
CREATE TRIGGER `compliance_days_result_added` AFTER INSERT ON `compliance_results` BEGIN
  DELETE FROM `compliance_days` WHERE `day_end` > NEW.`evaluated_at`;
END;
--> statement-breakpoint
CREATE TRIGGER `compliance_days_result_deleted` AFTER DELETE ON `compliance_results` BEGIN
  DELETE FROM `compliance_days` WHERE `day_end` > OLD.`evaluated_at`;
END;
--> statement-breakpoint
CREATE TRIGGER `compliance_days_result_changed` AFTER UPDATE ON `compliance_results` BEGIN
  DELETE FROM `compliance_days` WHERE `day_end` > min(OLD.`evaluated_at`, NEW.`evaluated_at`);
END;

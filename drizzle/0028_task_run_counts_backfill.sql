-- Runs that finished before task_runs.counts existed get their counts once (the statuses of src/modules/tasks/runs.ts).
UPDATE `task_runs` SET `counts` = (
  SELECT json_object(
    'queued', coalesce(sum(s = 'queued'), 0),
    'running', coalesce(sum(s = 'running'), 0),
    'succeeded', coalesce(sum(s = 'succeeded'), 0),
    'unchanged', coalesce(sum(s = 'unchanged'), 0),
    'failed', coalesce(sum(s = 'failed'), 0),
    'skipped', coalesce(sum(s = 'skipped'), 0))
  FROM (
    SELECT CASE
      WHEN i.`job_id` IS NULL THEN 'skipped'
      WHEN j.`state` = 'queued' THEN 'queued'
      WHEN j.`state` = 'running' THEN 'running'
      WHEN j.`outcome` = 'success' THEN 'succeeded'
      WHEN j.`outcome` = 'unchanged' THEN 'unchanged'
      ELSE 'failed' END AS s
    FROM `task_run_items` i LEFT JOIN `jobs` j ON j.`id` = i.`job_id`
    WHERE i.`run_id` = `task_runs`.`id`)
) WHERE `finished_at` IS NOT NULL AND `counts` IS NULL;

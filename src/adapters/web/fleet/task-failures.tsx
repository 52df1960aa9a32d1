import type { TaskRunItemOut, TaskRunOut } from "../../../modules/tasks/index.ts";
import { plural } from "../../../kernel/words.ts";
import { Time } from "../format.tsx";

/**
 * A task's last finished run and the devices that failed in it (GET /tasks/{id}/last-run/failures): the first
 * few with why, and a link to all of them in the run's device list. A device links to its page (and its last
 * failure's transcript) only for a role that may open it.
 */
export function LastRunFailures(props: {
  taskId: number;
  run: TaskRunOut | null;
  failures: TaskRunItemOut[];
  deviceLinks: boolean;
}) {
  const { run, failures } = props;
  if (!run) return null;
  const total = run.counts.failed;
  return (
    <section class="card" id="last-failures">
      <h2>{`Failures of the last finished run (#${run.id})`}</h2>
      {total === 0 ? (
        <p class="muted">
          {"No device failed in it; it finished "}
          <Time at={run.finished_at ? new Date(run.finished_at) : null} none="" />.
        </p>
      ) : (
        <>
          <p>
            {`${plural(total, "device")} failed; it finished `}
            <Time at={run.finished_at ? new Date(run.finished_at) : null} none="" />.
            {total > failures.length && (
              <>
                {" "}
                <a href={`/tasks/${props.taskId}?run=${run.id}&filter[status]=failed#run-devices`}>
                  {`All ${total} failures`}
                </a>
              </>
            )}
          </p>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Device</th>
                  <th>Outcome</th>
                  <th>Why</th>
                  <th>Finished</th>
                </tr>
              </thead>
              <tbody>
                {failures.map((i) => (
                  <tr>
                    <td>
                      {i.device_id && props.deviceLinks ? (
                        <a href={`/devices/${i.device_id}#last-failure`}>{i.device_name}</a>
                      ) : (
                        (i.device_name ?? "")
                      )}
                    </td>
                    <td>{i.outcome?.replaceAll("_", " ") ?? ""}</td>
                    <td>{i.error ?? i.message ?? ""}</td>
                    <td>
                      <Time at={i.finished_at ? new Date(i.finished_at) : null} none="" />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

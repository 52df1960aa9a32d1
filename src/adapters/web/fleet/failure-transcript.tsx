/**
 * A failed download's session on the device page, as GET /devices/{id}/last-failure gives it (configs.read):
 * the transcript, secrets masked by the collector before it was stored, shown as text; or, for a failure whose
 * result kept only the device's last lines, those. HTML drops a newline right after <pre>: one is given to drop,
 * so a transcript's own first line stays.
 */
export function FailureTranscript(props: { last_lines: string[]; transcript: string | null }) {
  if (props.transcript !== null)
    return (
      <details class="output" id="failure-transcript">
        <summary>Transcript of the session (secrets masked)</summary>
        <pre>{`\n${props.transcript}`}</pre>
      </details>
    );
  if (props.last_lines.length)
    return (
      <details class="output" id="failure-transcript">
        <summary>The last lines the device printed (secrets masked)</summary>
        <pre>{`\n${props.last_lines.join("\n")}`}</pre>
      </details>
    );
  return <p class="muted">No session transcript: the download failed before a session started.</p>;
}

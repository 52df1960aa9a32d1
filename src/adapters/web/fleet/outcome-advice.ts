import type { Job } from "../../../platform/jobs/queue.ts";

/** What an engineer can do about each way a download fails, shown beside the collector's own message. */
export const OUTCOME_ADVICE: Partial<Record<NonNullable<Job["outcome"]>, string>> = {
  auth_failed:
    "Check the username and passwords the device logs in with (its own or its credential set's), and that the account may log in over SSH or Telnet.",
  unreachable:
    "Check the address and port, that the device is up, and that the collector's host can reach it (firewalls, ACLs on the VTY lines).",
  timeout:
    "The device answered too slowly or stopped answering: check its load and the link, or give its device profile longer timeouts.",
  host_key_changed:
    "The device presented another SSH host key than the one pinned (the message names both). If it was replaced or re-keyed on purpose, accept the new key with POST /api/v1/devices/{id}/host-key/reset; otherwise find out why.",
  prompt_not_found:
    "The session never saw the prompt the device's template waits for: check the device's vendor and template, and its prompt settings.",
  error: "The message says what went wrong; the collector's log has the details.",
};

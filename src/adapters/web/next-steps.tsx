import type { Context } from "hono";
import { credentialsResource } from "../../modules/credentials/index.ts";
import type { WebEnv } from "./env.ts";

type Step = { done: boolean; title: string; why: string; href?: string; action?: string };

/**
 * What an install without backups yet needs, in order: a login for the collector, a device it can reach with a
 * template and port, a first backup. Each step links to the page that does it when the role may use it.
 */
export async function NextSteps(props: { c: Context<WebEnv>; devices: number; versions: number }) {
  const { c } = props;
  const { abilities, scope } = c.var.auth;
  const may = (a: Parameters<typeof abilities.has>[0]) => abilities.has(a);
  const credentialSets = may("credentials.read")
    ? (
        await credentialsResource.list(c.var.services.db, scope, {
          page: 1,
          perPage: 1,
          where: undefined,
          orderBy: [],
          fields: null,
        })
      ).total
    : null;
  const steps: Step[] = [
    {
      done: credentialSets !== null && credentialSets > 0,
      title: "Add a credential set",
      why: "The username and password (or SSH key) the collector logs in with; one set serves many devices.",
      href: may("credentials.write") ? "/credentials/new" : undefined,
      action: "Add a credential set",
    },
    {
      done: props.devices > 0,
      title: "Add a device with a template and port",
      why: "Its address, vendor, connection template (how to log in and what to run) and credential set; set the port when it is not the template's (22 for SSH).",
      href: may("devices.write") ? "/devices/new" : undefined,
      action: "Add a device",
    },
    {
      done: props.versions > 0,
      title: "Run a backup",
      why: "On the device's page, Test connection checks the login and Download now stores its configuration; the Nightly backup task backs up every device at 02:00 UTC.",
      href: props.devices > 0 ? "/devices" : may("tasks.read") ? "/tasks" : undefined,
      action: props.devices > 0 ? "Open your devices" : "See the tasks",
    },
  ];
  return (
    <section class="card" id="next-steps">
      <h2>Get started</h2>
      <p class="muted">No configuration is backed up yet. Three steps to the first backup:</p>
      <ol class="next-steps">
        {steps.map((s) => (
          <li data-done={String(s.done)}>
            <strong>{s.title}</strong>
            {s.done && <span class="done"> (done)</span>}
            <div>{s.why}</div>
            {!s.done &&
              (s.href ? (
                <a href={s.href}>{s.action}</a>
              ) : (
                <span class="muted">Your role cannot do this; ask an administrator.</span>
              ))}
          </li>
        ))}
      </ol>
    </section>
  );
}

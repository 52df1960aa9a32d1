import type { Context, Hono } from "hono";
import { categoriesResource } from "../../../modules/categories/index.ts";
import { commandsResource } from "../../../modules/commands/index.ts";
import { credentialsResource } from "../../../modules/credentials/index.ts";
import { deviceProfilesResource } from "../../../modules/device-profiles/index.ts";
import { tagsResource } from "../../../modules/tags/index.ts";
import { templatesResource } from "../../../modules/templates/index.ts";
import { vendorsResource } from "../../../modules/vendors/index.ts";
import { plural } from "../../../kernel/words.ts";
import { choices } from "../choices.ts";
import type { WebEnv } from "../env.ts";
import { type PageResource, type Row, registerResourcePages } from "./resource-pages.tsx";

const count = (r: Row, what = "device") => plural(Number(r.devices_count ?? 0), what);
const muted = (s: unknown) => (s ? <div class="muted">{String(s)}</div> : null);

const categoryChoices = (c: Context<WebEnv>) => choices(c, categoriesResource, "categories.read", "name");

/** Command groups (categories), their commands, vendors, tags and device profiles: each through its API resource. */
export function registerInventoryPages(web: Hono<WebEnv>): void {
  registerResourcePages(web, {
    path: "/categories",
    title: "Command groups",
    singular: "command group",
    plural: "command groups",
    ability: "categories",
    resource: categoriesResource as unknown as PageResource,
    bulkDelete: true,
    nameField: "name",
    intro: "A device's command group (category) decides which commands its backups run.",
    empty: "No command group yet.",
    fields: [
      { name: "name", label: "Name", kind: "text", hint: "Unique, e.g. Routers." },
      { name: "description", label: "Description", kind: "textarea" },
    ],
    columns: [
      {
        label: "Name",
        cell: (r) => (
          <>
            <strong>{String(r.name)}</strong>
            {muted(r.description)}
          </>
        ),
      },
      {
        label: "Commands",
        cell: (r) => {
          const cmds = r.commands as { id: number; command: string }[];
          return cmds.length ? (
            <ul class="links">
              {cmds.map((x) => (
                <li class="mono">{x.command}</li>
              ))}
            </ul>
          ) : (
            <span class="muted">none: its devices' backups run nothing</span>
          );
        },
      },
      { label: "Used by", cell: (r) => count(r) },
    ],
    rowLinks: (r) => <a href={`/commands?filter[category_id]=${r.id}`}>Commands</a>,
    deleteNote: (r) =>
      `Devices of yours in it: ${r.devices_count}. A command group that devices still use cannot be deleted: move them to another group first. Its commands are unlinked, not deleted.`,
  });

  registerResourcePages(web, {
    path: "/commands",
    title: "Commands",
    singular: "command",
    plural: "commands",
    ability: "commands",
    resource: commandsResource as unknown as PageResource,
    bulkDelete: true,
    nameField: "command",
    intro: "The lines a backup sends to the devices of each command group it belongs to.",
    empty: "No command here yet.",
    fields: [
      { name: "command", label: "Command", kind: "text", hint: "Sent as typed, e.g. show running-config." },
      { name: "description", label: "Description", kind: "textarea" },
      { name: "category_ids", label: "Command groups", kind: "checkboxes", options: categoryChoices },
    ],
    columns: [
      {
        label: "Command",
        cell: (r) => (
          <>
            <strong class="mono">{String(r.command)}</strong>
            {muted(r.description)}
          </>
        ),
      },
      {
        label: "Command groups",
        cell: (r) =>
          (r.categories as { id: number; name: string }[]).map((g) => (
            <>
              <a href={`/commands?filter[category_id]=${g.id}`}>{g.name}</a>{" "}
            </>
          )),
      },
    ],
    newValues: (c): Record<string, string[]> => {
      const group = c.req.query("filter[category_id]");
      return group && /^\d+$/.test(group) ? { category_ids: [group] } : {};
    },
    deleteNote: () => "The command leaves every command group it is in; configurations already stored for it stay.",
  });

  registerResourcePages(web, {
    path: "/vendors",
    title: "Vendors",
    singular: "vendor",
    plural: "vendors",
    ability: "vendors",
    resource: vendorsResource as unknown as PageResource,
    bulkDelete: true,
    nameField: "name",
    intro: "The makers of your devices, as devices and device profiles name them.",
    empty: "No vendor yet.",
    fields: [{ name: "name", label: "Name", kind: "text", hint: "At least 2 characters, e.g. Cisco." }],
    columns: [
      { label: "Name", cell: (r) => <strong>{String(r.name)}</strong> },
      { label: "Used by", cell: (r) => count(r) },
    ],
    deleteNote: (r) =>
      `Devices of yours from this vendor: ${r.devices_count}. A vendor that devices still name cannot be deleted: change their vendor first.`,
  });

  registerResourcePages(web, {
    path: "/tags",
    title: "Tags",
    singular: "tag",
    plural: "tags",
    ability: "tags",
    resource: tagsResource as unknown as PageResource,
    bulkDelete: true,
    nameField: "name",
    intro: "Labels for devices: filters, task targets and roles' device scopes use them.",
    empty: "No tag yet.",
    fields: [
      { name: "name", label: "Name", kind: "text" },
      { name: "color", label: "Colour", kind: "color" },
      { name: "description", label: "Description", kind: "textarea" },
    ],
    columns: [
      {
        label: "Name",
        cell: (r) => (
          <>
            <strong>{String(r.name)}</strong>
            {muted(r.description)}
          </>
        ),
      },
      { label: "Colour", cell: (r) => <code>{String(r.color)}</code> },
      { label: "Devices", cell: (r) => count(r) },
    ],
    deleteNote: (r) =>
      `Devices of yours carrying it: ${r.devices_count}; the tag is removed from them and from device profiles. A tag that a role's device scope names cannot be deleted.`,
  });

  registerResourcePages(web, {
    path: "/device-profiles",
    title: "Device profiles",
    singular: "device profile",
    plural: "device profiles",
    ability: "deviceprofiles",
    resource: deviceProfilesResource as unknown as PageResource,
    bulkDelete: true,
    nameField: "name",
    intro:
      "Defaults a new device takes (vendor, template, command group, credentials, port, tags) when created with the profile.",
    empty: "No device profile yet.",
    fields: [
      { name: "name", label: "Name", kind: "text" },
      { name: "description", label: "Description", kind: "textarea" },
      {
        name: "vendor_id",
        label: "Vendor",
        kind: "select",
        options: (c) => choices(c, vendorsResource, "vendors.read", "name"),
      },
      {
        name: "template_id",
        label: "Template",
        kind: "select",
        options: (c) => choices(c, templatesResource, "templates.read", "name"),
      },
      { name: "category_id", label: "Command group", kind: "select", options: categoryChoices },
      {
        name: "cred_id",
        label: "Credential set",
        kind: "select",
        options: (c) => choices(c, credentialsResource, "credentials.read", "cred_name"),
      },
      { name: "port", label: "Port", kind: "number", hint: "Empty: the template's port." },
      { name: "tags", label: "Tags", kind: "names", hint: "Comma-separated; unknown names are created." },
    ],
    columns: [
      {
        label: "Name",
        cell: (r) => (
          <>
            <strong>{String(r.name)}</strong>
            {muted(r.description)}
          </>
        ),
      },
      { label: "Vendor", cell: (r) => (r.vendor ? String(r.vendor) : <span class="muted">none</span>) },
      { label: "Port", cell: (r) => (r.port == null ? <span class="muted">template's</span> : String(r.port)) },
      { label: "Tags", cell: (r) => (r.tags as string[]).join(", ") },
      { label: "Devices created with it", cell: (r) => count(r) },
    ],
    deleteNote: (r) => `Devices of yours created with it: ${r.devices_count}. They keep the values they took from it.`,
  });
}

/**
 * What each group of routes (an operation's tag) is about: the API description declares every tag it uses with
 * this text, so a reader of the document, and each group of the generated Markdown, starts with what it holds.
 */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  "Activity log": "Who changed what, when, through which token and from where: every write, without secrets.",
  Categories: "Command groups: the commands a device of the category runs at each backup.",
  Commands: "The show commands devices run at backup; each belongs to one or more categories.",
  "Compare exclusions": "Line patterns left out when two configuration versions are compared.",
  "Configuration actions": "Backups on demand: download-now, and the jobs it queues.",
  "Configuration changes": "Each new configuration version's diff against the one before it.",
  Configurations: "Stored configuration versions: metadata, text, diffs, search, exports and retention.",
  Dashboard: "The fleet at a glance for the caller's scope: counts, queue, failures, recent changes.",
  "Device credentials": "Credential sets devices log in with; secrets are write-only.",
  "Device profiles": "Defaults (vendor, template, category, credentials, port, tags) a device inherits.",
  Devices: "The inventory: devices, their reachability, bulk writes, imports and exports.",
  Discovery:
    "Finding devices by address: scans of ranges and subnets, the candidates they find, and scan presets (docs/discovery.md).",
  Mail: "Mail settings, test messages and per-user subscriptions.",
  "Policy compliance": "Compliance policies, their assignments to devices, and the results of checking them.",
  Reports: "Reports over backups and compliance, as JSON or CSV.",
  Roles: "Roles: the abilities their users have and the devices they see.",
  Settings: "Service-wide settings.",
  Snippets: "Command snippets pushed to devices, and their deployments.",
  System: "The service itself: version, collectors, queue, database backups.",
  "System health": "Health checks of the service, the database and the collectors.",
  Tags: "Labels on devices, used by filters, tasks and role scopes.",
  Tasks: "Scheduled backups, compliance checks and snippet pushes, and their runs.",
  Templates: "Connection templates: how to log into, page and read each vendor family (YAML).",
  Users: "Users and their API tokens.",
  Vendors: "Device vendors; each has its connection templates.",
  Zones: "Where devices are reached from: the local zone, and remote zones polled by enrolled site collectors.",
  Webhooks: "Event deliveries to other systems, with their filters and delivery log.",
  "rConfig compatibility": "Routes rConfig V8 clients call that netkeep has no route of its own for (docs/rconfig.md).",
};

import { TASK_TYPES, type JobType, type TaskType } from "../../db/schema/index.ts";
import type { DeviceSelection } from "../devices/index.ts";
import { SNIPPET_TASK_TARGETS } from "../snippets/index.ts";

/**
 * Which target list a task type reads: one of the id lists, every device, none (system work), or "lists": the
 * devices any of the three lists reaches, every device when all three are empty.
 */
export type TargetKind = DeviceSelection;

type TaskTypeDef = {
  targets: TargetKind;
  /** The job each target device (or, for "none", the run itself) gets. */
  job: JobType;
  /** rConfig's task_command for the same work, accepted as an alias of the type. */
  rconfigCommand?: string;
  describe: string;
};

/** The task types, in the order forms and messages list them; the module's callers take them from here. */
export { TASK_TYPES };
export type { TaskType };

/** Adding a task type: add it to TASK_TYPES (src/db/schema/tasks.ts) and describe it here. */
export const TASK_TYPE_DEFS: Record<TaskType, TaskTypeDef> = {
  download_devices: {
    targets: "devices",
    job: "download",
    rconfigCommand: "rconfig:download-device",
    describe: "back up the devices listed in `devices`",
  },
  download_categories: {
    targets: "categories",
    job: "download",
    rconfigCommand: "rconfig:download-category",
    describe: "back up the devices in the categories listed in `categories`",
  },
  download_tags: {
    targets: "tags",
    job: "download",
    rconfigCommand: "rconfig:download-tag",
    describe: "back up the devices carrying any tag listed in `tags`",
  },
  download_all: { targets: "all", job: "download", describe: "back up every device" },
  purge_configs: {
    targets: "none",
    job: "purge_configs",
    describe: "delete stored configurations the retention rules no longer keep",
  },
  snippet: {
    targets: SNIPPET_TASK_TARGETS,
    job: "snippet_push",
    describe:
      "deploy the snippet `snippet_id` (with `snippet_options`) to the devices listed in `devices`, in the categories in `categories` or carrying the tags in `tags` (every device when all three are empty); each run is a snippet deployment",
  },
  backup_database: {
    targets: "none",
    job: "backup_database",
    describe: "back the service's own database up to storage/backups/, keeping the number settings.backups.keep says",
  },
  discovery_scan: {
    targets: "none",
    job: "discover",
    describe:
      "scan the subnets and ranges of the scan preset `scan_preset_id` (docs/discovery.md): new devices become candidates, or devices when the preset adopts",
  },
  compliance: {
    targets: "lists",
    job: "compliance",
    describe:
      "check the devices listed in `devices`, in the categories in `categories` or carrying the tags in `tags` (every device when all three are empty) against the enabled policy assignments covering them",
  },
};

export const TARGET_LISTS = ["devices", "categories", "tags"] as const;
export type TargetList = (typeof TARGET_LISTS)[number];

export const RCONFIG_COMMANDS = Object.values(TASK_TYPE_DEFS).flatMap((d) =>
  d.rconfigCommand ? [d.rconfigCommand] : [],
);

/** Every value task_type (or rConfig's task_command) accepts. */
export const TASK_TYPE_NAMES = [...TASK_TYPES, ...RCONFIG_COMMANDS] as [string, ...string[]];

export function canonicalTaskType(name: string): TaskType | undefined {
  if ((TASK_TYPES as readonly string[]).includes(name)) return name as TaskType;
  return (Object.entries(TASK_TYPE_DEFS) as [TaskType, TaskTypeDef][]).find(([, d]) => d.rconfigCommand === name)?.[0];
}

/** The types whose runs queue one job per target device. */
export const DEVICE_TASK_TYPES = TASK_TYPES.filter((t) => TASK_TYPE_DEFS[t].targets !== "none");

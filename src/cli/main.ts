import { text } from "node:stream/consumers";
import { systemClock } from "../kernel/clock.ts";
import type { Command } from "./command.ts";
import { runConsole } from "./run.ts";
import { migrateCommand } from "./commands/migrate.ts";
import { userCreateCommand } from "./commands/user-create.ts";
import { userPasswordCommand } from "./commands/user-password.ts";
import { tokenCreateCommand } from "./commands/token-create.ts";
import { tokenListCommand } from "./commands/token-list.ts";
import { tokenRevokeCommand } from "./commands/token-revoke.ts";
import { keyRotateCommand } from "./commands/key-rotate.ts";
import { importOxidizedCommand } from "./commands/import-oxidized.ts";
import { importRancidCommand } from "./commands/import-rancid.ts";
import { apiDocsBuildCommand } from "./commands/api-docs-build.ts";
import { configsPurgeCommand } from "./commands/configs-purge.ts";
import { configsReindexCommand } from "./commands/configs-reindex.ts";
import { dbBackupCommand } from "./commands/db-backup.ts";
import { dbRestoreCommand } from "./commands/db-restore.ts";
import { deviceDebugCommand } from "./commands/device-debug.ts";
import { templateRenderCommand } from "./commands/template-render.ts";
import { configsRemaskCommand } from "./commands/configs-remask.ts";
import { configsScanSecretsCommand } from "./commands/configs-scan-secrets.ts";
import { ldapTestCommand } from "./commands/ldap-test.ts";
import { ldapUserCommand } from "./commands/ldap-user.ts";
import { collectorRemoteCommand } from "./commands/collector-remote.ts";

/** Every `svc` command, in the order `svc --help` lists them. A new command is one file and one line here. */
const commands: Record<string, Command> = {
  migrate: migrateCommand,
  "user:create": userCreateCommand,
  "user:password": userPasswordCommand,
  "token:create": tokenCreateCommand,
  "token:list": tokenListCommand,
  "token:revoke": tokenRevokeCommand,
  "key:rotate": keyRotateCommand,
  "import:oxidized": importOxidizedCommand,
  "import:rancid": importRancidCommand,
  "api-docs:build": apiDocsBuildCommand,
  "configs:purge": configsPurgeCommand,
  "configs:reindex": configsReindexCommand,
  "configs:remask": configsRemaskCommand,
  "configs:scan-secrets": configsScanSecretsCommand,
  "db:backup": dbBackupCommand,
  "db:restore": dbRestoreCommand,
  "device:debug": deviceDebugCommand,
  "template:render": templateRenderCommand,
  "ldap:test": ldapTestCommand,
  "ldap:user": ldapUserCommand,
  "collector:remote": collectorRemoteCommand,
};

// exitCode rather than exit(): stdout may still be draining into a pipe.
process.exitCode = await runConsole(commands, process.argv.slice(2), {
  env: process.env,
  io: { print: (line) => console.log(line), readStdin: () => text(process.stdin) },
  printError: (line) => console.error(line),
  clock: systemClock,
});

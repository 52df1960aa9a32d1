import { revokeTokenRecorded } from "../../platform/auth/token-audit.ts";
import { CliError, defineCommand } from "../command.ts";

export const tokenRevokeCommand = defineCommand({
  summary: "Revoke an API token by id; it stops working at once",
  options: {
    id: {
      type: "string",
      placeholder: "id",
      required: true,
      description: "the token's id, as svc token:list shows it",
    },
  },
  async run(flags, { db, clock, io }) {
    if (!/^\d+$/.test(flags.id))
      throw new CliError(`--id '${flags.id}' is not a token id; use the number svc token:list shows`);
    if (!(await revokeTokenRecorded(db, { system: "svc token:revoke" }, Number(flags.id), clock.now()))) {
      throw new CliError(`no active token has id ${flags.id} (unknown or already revoked); see svc token:list`);
    }
    io.print(`Revoked token ${flags.id}.`);
  },
});

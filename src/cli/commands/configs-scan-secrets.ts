import { scanStoredSecrets } from "../../modules/configs/index.ts";
import { CliError, defineCommand } from "../command.ts";

export const configsScanSecretsCommand = defineCommand({
  summary:
    "Report stored configuration versions where netkeep's generic masking layer still finds a secret (never the values); exits 1 when it finds any",
  options: {},
  async run(_flags, { db, io }) {
    const { versions_scanned, findings } = await scanStoredSecrets(db);
    for (const f of findings)
      io.print(
        `${f.device_name} (device ${f.device_id}) ${f.command} v${f.version} (config ${f.config_id}): ${f.values} value${f.values === 1 ? "" : "s"} (${f.rules.join(", ")})`,
      );
    io.print(`Scanned ${versions_scanned} versions: ${findings.length} hold a value in clear.`);
    if (findings.length)
      throw new CliError(`${findings.length} stored versions hold secrets in clear; svc configs:remask masks them`);
  },
});

import { ABILITIES, parseAbilityList } from "../../platform/auth/abilities.ts";
import { issueTokenRecorded } from "../../platform/auth/token-audit.ts";
import { findUserByName } from "../../platform/auth/users.ts";
import { roles } from "../../db/schema/index.ts";
import { eq } from "drizzle-orm";
import { CliError, defineCommand } from "../command.ts";
import { formatTime } from "../table.ts";

const DAY_MS = 86_400_000;
const catalogue = ABILITIES.join(", ");

function parseAbilities(text: string) {
  const { abilities, unknown } = parseAbilityList(text);
  if (unknown.length) {
    const names = unknown.map((n) => `'${n}'`).join(", ");
    throw new CliError(
      `--abilities has unknown abilit${unknown.length === 1 ? "y" : "ies"} ${names}; use any of: ${catalogue}`,
    );
  }
  if (!abilities.length)
    throw new CliError(`--abilities needs at least one ability, comma-separated; use any of: ${catalogue}`);
  return abilities;
}

/** undefined without the flag: the settings' default lifetime applies (tokens.default_expiry_days). */
function parseExpiry(text: string | undefined, now: Date): Date | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new CliError(
      `--expires-days '${text}' is not a whole number of days; use 1 or more, or leave it out for a token that does not expire`,
    );
  }
  return new Date(now.getTime() + Number(text) * DAY_MS);
}

export const tokenCreateCommand = defineCommand({
  summary: "Issue an API token for a user; its value is printed once, as the last line",
  options: {
    user: { type: "string", placeholder: "username", required: true, description: "the user the token acts as" },
    name: {
      type: "string",
      placeholder: "name",
      required: true,
      description: "what the token is for, e.g. 'backup script'",
    },
    abilities: {
      type: "string",
      placeholder: "list",
      required: true,
      description: "comma-separated abilities, e.g. devices.read,configs.read",
    },
    "expires-days": {
      type: "string",
      placeholder: "days",
      description: "expire after this many days (default: the settings' tokens.default_expiry_days, else never)",
    },
  },
  async run(flags, { db, clock, io }) {
    const abilities = parseAbilities(flags.abilities);
    const now = clock.now();
    const expiresAt = parseExpiry(flags["expires-days"], now);
    const user = await findUserByName(db, flags.user);
    if (!user)
      throw new CliError(`--user '${flags.user}' is not a user; create it with svc user:create or check the spelling`);
    if (!user.enabled) throw new CliError(`--user '${user.username}' is disabled; its tokens would be refused`);
    // A token can never do more than its owner's role, so an ability the role lacks would only ever answer 403.
    const [role] = await db
      .select({ name: roles.name, permissions: roles.permissions })
      .from(roles)
      .where(eq(roles.id, user.roleId));
    const beyondRole = abilities.filter((a) => !role?.permissions.includes(a));
    if (beyondRole.length) {
      throw new CliError(
        `--abilities ${beyondRole.join(", ")} ${beyondRole.length === 1 ? "is" : "are"} not granted by ${user.username}'s role '${role?.name}'; drop ${beyondRole.length === 1 ? "it" : "them"} or change the role`,
      );
    }
    const {
      id,
      value,
      expiresAt: expires,
    } = await issueTokenRecorded(
      db,
      { system: "svc token:create" },
      { userId: user.id, name: flags.name, abilities, expiresAt },
      now,
    );
    io.print(
      `Created token ${id} '${flags.name}' for user '${user.username}': ${abilities.join(", ")}; expires ${formatTime(expires, "never")}.`,
    );
    io.print("Copy the token now; it is not shown again:");
    // Last line, alone, so scripts can take it with `tail -n 1`.
    io.print(value);
  },
});

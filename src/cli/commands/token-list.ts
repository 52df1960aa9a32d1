import { asc, eq } from "drizzle-orm";
import { tokenState } from "../../platform/auth/tokens.ts";
import { findUserByName } from "../../platform/auth/users.ts";
import { apiTokens, users } from "../../db/schema/index.ts";
import { CliError, defineCommand } from "../command.ts";
import { formatTable, formatTime } from "../table.ts";

export const tokenListCommand = defineCommand({
  summary: "List API tokens with their owner, abilities, use and state (never their values)",
  options: {
    user: { type: "string", placeholder: "username", description: "only this user's tokens" },
  },
  async run(flags, { db, clock, io }) {
    const owner = flags.user === undefined ? undefined : await findUserByName(db, flags.user);
    if (flags.user !== undefined && !owner)
      throw new CliError(`--user '${flags.user}' is not a user; check the spelling`);
    // Columns picked one by one: the hash and prefix have no business on a console.
    const rows = await db
      .select({
        id: apiTokens.id,
        name: apiTokens.name,
        username: users.username,
        abilities: apiTokens.abilities,
        createdAt: apiTokens.createdAt,
        lastUsedAt: apiTokens.lastUsedAt,
        expiresAt: apiTokens.expiresAt,
        revokedAt: apiTokens.revokedAt,
      })
      .from(apiTokens)
      .innerJoin(users, eq(users.id, apiTokens.userId))
      .where(owner ? eq(apiTokens.userId, owner.id) : undefined)
      .orderBy(asc(apiTokens.id));
    if (!rows.length) {
      io.print(owner ? `User '${owner.username}' has no tokens.` : "No tokens.");
      return;
    }
    const now = clock.now();
    const table = formatTable(
      ["ID", "NAME", "USER", "ABILITIES", "CREATED", "LAST USED", "EXPIRES", "STATE"],
      rows.map((t) => [
        String(t.id),
        t.name,
        t.username,
        t.abilities.join(","),
        formatTime(t.createdAt, "-"),
        formatTime(t.lastUsedAt, "never"),
        formatTime(t.expiresAt, "never"),
        tokenState(t, now),
      ]),
    );
    for (const line of table) io.print(line);
  },
});

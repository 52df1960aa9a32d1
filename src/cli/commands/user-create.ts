import { generatePassword, hashPassword } from "../../platform/auth/passwords.ts";
import { createUser } from "../../platform/auth/users.ts";
import { MIN_PASSWORD_LENGTH } from "../../kernel/password-rule.ts";
import { CliError, defineCommand } from "../command.ts";

/** A password piped to the console (`--password-stdin`). One trailing newline is what `echo` and most secret stores add; anything else belongs to the password. */
export async function passwordFromStdin(readStdin: () => Promise<string>): Promise<string> {
  const password = (await readStdin()).replace(/\r?\n$/, "");
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new CliError(
      `the password on stdin has ${password.length} characters; pipe one of at least ${MIN_PASSWORD_LENGTH}, or leave out --password-stdin to have one generated`,
    );
  }
  return password;
}

export const userCreateCommand = defineCommand({
  summary: "Create a user; the password is read from stdin or generated and printed once",
  options: {
    username: {
      type: "string",
      placeholder: "name",
      required: true,
      description: "login name: 3-64 letters, digits, '.', '_' or '-'",
    },
    email: { type: "string", placeholder: "address", required: true, description: "email address" },
    role: {
      type: "string",
      placeholder: "role",
      required: true,
      description: "admin, operator, viewer or a custom role's name",
    },
    "password-stdin": {
      type: "boolean",
      description: `read the password (at least ${MIN_PASSWORD_LENGTH} characters) from stdin instead of generating one`,
    },
  },
  async run(flags, { db, clock, io }) {
    const generated = flags["password-stdin"] ? undefined : generatePassword();
    const password = generated ?? (await passwordFromStdin(io.readStdin));
    const { id } = await createUser(
      db,
      {
        username: flags.username,
        email: flags.email,
        roleName: flags.role,
        passwordHash: await hashPassword(password),
      },
      clock.now(),
    );
    io.print(`Created user '${flags.username}' (id ${id}) with role '${flags.role}'.`);
    if (generated) {
      // Shown this once, on the console only: it is stored as a hash.
      io.print("Generated password, shown only now:");
      io.print(generated);
    }
  },
});

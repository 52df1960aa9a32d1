import type { devices } from "../src/db/schema/index.ts";
import type { ConnectionTemplate } from "../src/modules/templates/index.ts";

/** What a session is told: the device, its template, its login and commands (collect.ts runs it). */

export type Login = {
  username: string;
  password?: string;
  enablePassword?: string;
  privateKey?: string;
  passphrase?: string;
};

/** The device, its template, its login and the commands its category runs: everything a session needs. */
export type Plan = Target & { commands: string[] };

/** Where and how to log in: the device, its template and the login to use. */
export type Target = { device: typeof devices.$inferSelect; template: ConnectionTemplate; login: Login };

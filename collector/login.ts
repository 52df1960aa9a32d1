import type { credentials, devices } from "../src/db/schema/index.ts";
import type { SecretBox } from "../src/platform/secrets/box.ts";
import type { Login } from "./collect.ts";

/** The login a credential set gives, or the device's own username and passwords when it has none. */
export async function loginOf(
  secrets: SecretBox,
  device: typeof devices.$inferSelect,
  cred: typeof credentials.$inferSelect | null,
): Promise<Login> {
  const decrypt = async (v: string | null | undefined) => (v ? await secrets.decrypt(v) : undefined);
  if (cred) {
    return {
      username: cred.username,
      password: await decrypt(cred.passwordEnc),
      enablePassword: await decrypt(cred.enablePasswordEnc),
      privateKey: await decrypt(cred.sshKeyEnc),
      passphrase: await decrypt(cred.sshKeyPassphraseEnc),
    };
  }
  return {
    username: device.username,
    password: await decrypt(device.passwordEnc),
    enablePassword: await decrypt(device.enablePasswordEnc),
  };
}

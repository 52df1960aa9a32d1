import type { Config } from "../../kernel/config.ts";
import type { Clock } from "../../kernel/clock.ts";
import type { Db } from "../../db/client.ts";
import type { SecretBox } from "../secrets/box.ts";
import type { RateLimiter } from "./rate-limit.ts";
import type { Logger } from "../../kernel/logger.ts";
import type { Metrics } from "../metrics/registry.ts";
import type { Ability } from "../auth/abilities.ts";
import type { DeviceScope } from "../auth/scope.ts";

/** Everything a request may need, built once by createApp and put on every context. */
export type Services = {
  db: Db;
  config: Config;
  clock: Clock;
  secrets: SecretBox;
  rateLimiter: RateLimiter;
  logger: Logger;
  metrics: Metrics;
  /**
   * Called after a request committed jobs to the queue: tells the collector this process started (src/main.ts)
   * to claim them now instead of at its next poll. Collectors elsewhere find them at their next poll.
   */
  jobsQueued: () => void;
};

/** Who is calling, resolved from the API token by the route guard (or from a web session by the web's page guard). */
export type AuthContext = {
  userId: number;
  username: string;
  roleName: string;
  /** null for a web session: a page acts as its logged-in user, with no token. */
  tokenId: number | null;
  tokenName: string;
  /** The token's abilities intersected with its owner's role: what this request may do. */
  abilities: ReadonlySet<Ability>;
  scope: DeviceScope;
  ip: string;
};

export type AppEnv = {
  Variables: {
    services: Services;
    auth: AuthContext;
    clientIp: string;
  };
};

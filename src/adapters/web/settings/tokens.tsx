import type { Context } from "hono";
import { isAbility, RESOURCES, type Ability } from "../../../platform/auth/abilities.ts";
import type { WebEnv } from "../env.ts";

const NAME_MAX = 100;

/** What the create form shows after a submission: the refusal and what was typed, or the new token once. */
export type TokenFormState = {
  errors?: string[];
  name?: string;
  checked?: string[];
  expiresOn?: string;
  created?: { id: number; name: string; value: string; abilities: string[] };
};

/** What the user's role grants (read for this request, as the page's `auth`): a token can hold no more. */
export const grantedAbilities = (c: Context<WebEnv>): Set<string> => new Set(c.var.auth.abilities);

export function AbilityGrid(props: { granted: Set<string>; checked: Set<string>; onlyGranted?: boolean }) {
  return (
    <table class="ability-grid">
      <thead>
        <tr>
          <th>Resource</th>
          <th>Read</th>
          <th>Write</th>
        </tr>
      </thead>
      <tbody>
        {RESOURCES.filter(
          (r) => !props.onlyGranted || props.granted.has(`${r}.read`) || props.granted.has(`${r}.write`),
        ).map((resource) => (
          <tr>
            <td>{resource}</td>
            {(["read", "write"] as const).map((verb) => {
              const ability = `${resource}.${verb}`;
              if (props.onlyGranted && !props.granted.has(ability)) return <td></td>;
              return (
                <td>
                  <input
                    type="checkbox"
                    name="abilities"
                    value={ability}
                    id={`ability-${ability}`}
                    checked={props.checked.has(ability)}
                    disabled={!props.granted.has(ability)}
                  />{" "}
                  <label for={`ability-${ability}`}>
                    <code>{ability}</code>
                  </label>
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function NewToken(props: { created: NonNullable<TokenFormState["created"]> }) {
  return (
    <section class="card" id="new-token">
      <h2>Token '{props.created.name}' created</h2>
      <p class="alert warning" role="alert">
        Copy this token now. It is shown only once: netkeep stores only a hash of it and cannot show it again.
      </p>
      <div class="secret">
        <code id="new-token-value">{props.created.value}</code>
        <button type="button" class="secondary" data-copy-from="new-token-value">
          Copy
        </button>
      </div>
      <p class="muted">
        Send it in the <code>apitoken</code> header. Abilities: {props.created.abilities.join(", ")}.
      </p>
    </section>
  );
}

/** The create form's name and abilities, and what is wrong with them (abilities only within the user's role). */
export async function checkTokenForm(c: Context<WebEnv>, form: Record<string, unknown>) {
  const name = typeof form.name === "string" ? form.name.trim() : "";
  const checked = [...new Set(asList(form.abilities))];
  const expiresOn = typeof form.expires_on === "string" ? form.expires_on.trim() : "";
  const granted = grantedAbilities(c);
  const errors: string[] = [];
  if (!name) errors.push("Name is required: say what the token is for, e.g. 'backup script'.");
  else if (name.length > NAME_MAX) errors.push(`Name must be at most ${NAME_MAX} characters.`);
  const unknown = checked.filter((a) => !isAbility(a));
  if (unknown.length) errors.push(`Unknown abilities: ${unknown.join(", ")}.`);
  const beyond = checked.filter((a) => isAbility(a) && !granted.has(a));
  if (beyond.length) errors.push(`Your role does not grant: ${beyond.join(", ")}.`);
  if (!checked.length) errors.push("Tick at least one ability: a token without abilities could not call any endpoint.");
  const expiresAt = expiryOf(expiresOn, c.var.services.clock.now());
  if (expiresAt === "invalid") errors.push("Expires on must be a date (YYYY-MM-DD) after today, or empty.");
  return {
    name,
    checked,
    expiresOn,
    errors,
    abilities: checked as Ability[],
    expiresAt: expiresAt === "invalid" ? undefined : expiresAt,
  };
}

/**
 * The form's optional date: the token works through that whole day (UTC), so it ends at the next midnight.
 * Empty is undefined: the settings' default lifetime applies, as for a token made through the API without a date.
 */
function expiryOf(day: string, now: Date): Date | undefined | "invalid" {
  if (!day) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return "invalid";
  const start = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(start.getTime()) || start.toISOString().slice(0, 10) !== day) return "invalid";
  const end = new Date(start.getTime() + 86_400_000);
  return end.getTime() - 86_400_000 <= now.getTime() ? "invalid" : end;
}

const asList = (v: unknown): string[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === "string");

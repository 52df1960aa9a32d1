import { Field, type FieldProblems } from "../form.tsx";
import { CsrfForm } from "../layout.tsx";

/** What the test-send left to show: the address typed, and the outcome or the problems. */
export type TestMailState = { to: string; sent?: string; refusal?: string; problems?: FieldProblems };

/**
 * **Send a test mail** under the SMTP settings (system.write, as POST /settings/smtp/test): one message to the
 * address given, through the settings in force; the page says whether the server took it, or why not.
 */
export function TestMailForm(props: { csrf: string; state?: TestMailState }) {
  const s = props.state;
  return (
    <section class="card" id="test-mail">
      <h2>Send a test mail</h2>
      {s?.sent && (
        <p class="alert success" role="status">
          {s.sent}
        </p>
      )}
      {s?.refusal && (
        <p class="alert error" role="alert">
          {s.refusal}
        </p>
      )}
      <CsrfForm action="/settings/smtp/test#test-mail" csrf={props.csrf} class="row-form">
        <Field
          id="test-mail-to"
          name="to"
          label="To"
          problems={s?.problems}
          hint="Sent now through the saved SMTP settings (save a change to them first)."
        >
          <input type="text" id="test-mail-to" name="to" value={s?.to ?? ""} placeholder="noc@example.net" />
        </Field>
        <button type="submit" class="secondary">
          Send a test mail
        </button>
      </CsrfForm>
    </section>
  );
}

import { raw } from "hono/html";
import type { Enrolment } from "../../../platform/auth/mfa/second-factor.ts";

/** The QR code and secret of a TOTP enrolment, and the form that confirms it with a first code. */
export function EnrolmentForm(props: {
  action: string;
  csrf: string;
  enrolment: Enrolment;
  next?: string;
  error?: string;
}) {
  return (
    <section class="card narrow">
      <h1>Set up a second factor</h1>
      {props.error && (
        <p class="alert error" role="alert">
          {props.error}
        </p>
      )}
      <p>
        Scan this code with an authenticator app (FreeOTP, Aegis, Google or Microsoft Authenticator, 1Password ...),
        then type the 6 digits it shows.
      </p>
      <div class="qr-code" role="img" aria-label="QR code of the secret">
        {raw(props.enrolment.qrSvg)}
      </div>
      <p>
        Or type the secret: <code class="totp-secret">{props.enrolment.secret}</code>
      </p>
      <form method="post" action={props.action}>
        <input type="hidden" name="_csrf" value={props.csrf} />
        {props.next && <input type="hidden" name="next" value={props.next} />}
        <label for="code">Code from the app</label>
        <input
          type="text"
          id="code"
          name="code"
          inputmode="numeric"
          autocomplete="one-time-code"
          pattern="[0-9]{6}"
          required
          autofocus
        />
        <div class="actions">
          <button type="submit">Turn on</button>
        </div>
      </form>
    </section>
  );
}

/** Recovery codes, shown once: each signs in once when the phone is lost. */
export function RecoveryCodes(props: { codes: string[]; continueHref: string }) {
  return (
    <section class="card narrow">
      <h1>Your recovery codes</h1>
      <p class="alert success" role="status">
        Keep these somewhere safe now: they are shown only this once. Each one signs you in once in place of a code from
        the app.
      </p>
      <ul class="recovery-codes">
        {props.codes.map((code) => (
          <li>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <p>
        <a class="button" href={props.continueHref}>
          Continue
        </a>
      </p>
    </section>
  );
}

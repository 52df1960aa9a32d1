import type { ComplianceStatus } from "../../../modules/compliance/index.ts";
import type { ResultOut } from "../../../modules/compliance/index.ts";
import { plural } from "../../../kernel/words.ts";

/** A result's state in words, as people say it. */
export const STATE_WORDS: Record<ComplianceStatus, string> = {
  compliant: "compliant",
  not_compliant: "not compliant",
  not_evaluated: "not evaluated",
};

export const StateBadge = (props: { status: ComplianceStatus }) => (
  <span class={`badge ${props.status}`}>{STATE_WORDS[props.status] ?? props.status}</span>
);

/**
 * The failed rules of a result: what each checks, the configuration lines that break it (or the line that is
 * missing), and the lines that would fix it when the fix is known. `limit` caps the rules shown (a table cell).
 */
export function FailingRules(props: { rules: ResultOut["rules"]; limit?: number }) {
  const failed = props.rules.filter((r) => !r.passed);
  const shown = props.limit ? failed.slice(0, props.limit) : failed;
  return (
    <div class="failing-rules">
      {shown.map((rule) => (
        <div class="failing-rule">
          <strong>{rule.description || rule.method}</strong>
          {rule.evidence.length > 0 && (
            <ul class="rule-lines">
              {rule.evidence.slice(0, props.limit ? 3 : undefined).map((e) => (
                <li>
                  {e.line === null ? "missing: " : `line ${e.line}: `}
                  <code>{e.text}</code>
                </li>
              ))}
              {props.limit && rule.evidence.length > 3 ? (
                <li class="muted">{`and ${plural(rule.evidence.length - 3, "more line")}`}</li>
              ) : null}
            </ul>
          )}
          {rule.remediation?.length ? (
            <div class="remediation">
              <span class="muted">Fix:</span>
              <pre class="snippet">{rule.remediation.join("\n")}</pre>
            </div>
          ) : null}
        </div>
      ))}
      {props.limit && failed.length > props.limit ? (
        <div class="muted">{`and ${plural(failed.length - props.limit, "more failing rule")}`}</div>
      ) : null}
    </div>
  );
}

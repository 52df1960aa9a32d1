import type { Context } from "hono";
import { API_VERSIONS, type ApiVersion } from "../../api/versions.ts";
import type { BodyDoc, EndpointDoc, FieldDoc } from "../../docs/reference.ts";
import type { WebEnv } from "../env.ts";

const anchor = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
const endpointAnchor = (e: EndpointDoc) => anchor(`${e.method} ${e.path}`);
const exampleText = (value: unknown) => JSON.stringify(value) ?? "null";

function Fields(props: { title: string; fields: FieldDoc[] }) {
  if (!props.fields.length) return null;
  return (
    <div>
      <h4>{props.title}</h4>
      <table class="fields">
        <thead>
          <tr>
            <th>Name</th>
            <th>Type</th>
            <th>Required</th>
            <th>Rules</th>
            <th>Example</th>
          </tr>
        </thead>
        <tbody>
          {props.fields.map((f) => (
            <tr>
              <td>
                <code>{f.name}</code>
                {f.description && <div class="muted">{f.description}</div>}
              </td>
              <td>{f.type}</td>
              <td>{f.required ? "required" : "optional"}</td>
              <td>{f.rules.length ? f.rules.join("; ") : <span class="muted">-</span>}</td>
              <td>
                <code>{exampleText(f.example)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Body(props: { body: BodyDoc }) {
  const { body } = props;
  return (
    <div>
      <p>
        Request body: {body.required ? "required" : "optional"}, content type{" "}
        {body.contents.map((c, i) => [i ? ", " : "", <code>{c.contentType}</code>])}.
      </p>
      {body.description && <p>{body.description}</p>}
      {body.contents.map((content) => {
        const suffix = body.contents.length > 1 ? ` (${content.contentType})` : "";
        if (content.fields) return <Fields title={`Body fields${suffix}`} fields={content.fields} />;
        if (content.value) {
          return (
            <p>
              Body{suffix}: {content.value.type}
              {content.value.rules.length ? `; ${content.value.rules.join("; ")}` : ""}. Example:{" "}
              <code>{exampleText(content.value.example)}</code>
            </p>
          );
        }
        return null;
      })}
    </div>
  );
}

function Endpoint(props: { endpoint: EndpointDoc }) {
  const e = props.endpoint;
  return (
    <article class="endpoint" id={endpointAnchor(e)} data-method={e.method} data-path={e.path}>
      <h3>
        <span class={`method ${e.method.toLowerCase()}`}>{e.method}</span> <code>{e.path}</code>
      </h3>
      <p>{e.summary}</p>
      {e.deprecated && <p class="alert warning">Deprecated: avoid in new integrations.</p>}
      {e.description && <p class="muted">{e.description}</p>}
      {e.ability && (
        <p>
          Ability: <code>{e.ability}</code>
        </p>
      )}
      <Fields title="Path parameters" fields={e.pathParameters} />
      <Fields title="Query parameters" fields={e.queryParameters} />
      <Fields title="Header parameters" fields={e.headerParameters} />
      {e.body && <Body body={e.body} />}
      <h4>Responses</h4>
      <ul class="responses">
        {e.responses.map((r) => (
          <li>
            <code>{r.status}</code> {r.description}
          </li>
        ))}
      </ul>
    </article>
  );
}

/** The Documentation tab: the API reference of one version, from the same description the Markdown file renders. */
export function documentationTab(c: Context<WebEnv>) {
  const asked = c.req.query("version") ?? "v1";
  const version: ApiVersion = (API_VERSIONS as readonly string[]).includes(asked) ? (asked as ApiVersion) : "v1";
  const reference = c.var.web.reference(version);
  const count = reference.groups.reduce((n, g) => n + g.endpoints.length, 0);
  return (
    <div>
      <nav class="versions" aria-label="API version">
        {API_VERSIONS.map((v) => (
          <a
            href={`/settings/restapi?tab=documentation&version=${v}`}
            aria-current={v === version ? "page" : undefined}
          >
            REST API {v}
          </a>
        ))}
      </nav>
      {asked !== version && (
        <p class="alert error">
          There is no API version '{asked}'; showing {version}.
        </p>
      )}
      <section class="card">
        <h2>{reference.title}</h2>
        <p>
          Version {reference.version}: {count} endpoints in {reference.groups.length} groups. Base URL:{" "}
          <code>{reference.baseUrl ?? c.var.services.config.appUrl}</code>
        </p>
        {reference.authSchemes.map((a) => (
          <p>
            Authentication: {a.type === "apiKey" ? "API key" : a.type}
            {a.parameter && (
              <span>
                {" "}
                in {a.in ?? "header"} <code>{a.parameter}</code>
              </span>
            )}
            , on every request (create one on the API Token tab). {a.description}
          </p>
        ))}
        <p class="muted">
          Requests and responses are JSON with snake_case fields; every endpoint needs the ability shown with it.
        </p>
        <ul class="toc">
          {reference.groups.map((g) => (
            <li>
              <a href={`#group-${anchor(g.name)}`}>{g.name}</a> <span class="muted">({g.endpoints.length})</span>
            </li>
          ))}
        </ul>
      </section>
      {reference.groups.map((g) => (
        <section class="card" id={`group-${anchor(g.name)}`} data-group={g.name}>
          <h2>{g.name}</h2>
          {g.endpoints.map((e) => (
            <Endpoint endpoint={e} />
          ))}
        </section>
      ))}
    </div>
  );
}

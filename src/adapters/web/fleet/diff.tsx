import type { Hono } from "hono";
import { compareConfigs } from "../../../modules/configs/index.ts";
import { diffConfigsRoute } from "../../../modules/configs/index.ts";
import { getSettings } from "../../../platform/settings/service.ts";
import type { WebEnv } from "../env.ts";
import { renderPage } from "../layout.tsx";
import { hrefWith } from "../list-page.tsx";
import { routeQuery } from "../route-query.ts";
import { requirePage } from "../viewer.ts";
import { diffRows, type Cell, type Row, type Segment } from "./diff-rows.ts";

const VIEWS = ["side", "inline"] as const;

const Words = (props: { segments: Segment[] }) => (
  <>{props.segments.map((s) => (s.changed ? <mark>{s.text}</mark> : s.text))}</>
);

function Fold(props: { row: Extract<Row, { kind: "fold" }>; colspan: number }) {
  const { row } = props;
  const n = row.oldTo - row.oldFrom + 1;
  return (
    <tr class="fold">
      <td
        colspan={props.colspan}
      >{`⋯ ${n} unchanged line${n === 1 ? "" : "s"} (old ${row.oldFrom}-${row.oldTo}, new ${row.newFrom}-${row.newTo})`}</td>
    </tr>
  );
}

const SideCell = (props: { cell: Cell | null; kind: "old" | "new"; changed: boolean }) =>
  props.cell ? (
    <>
      <td class="ln">{props.cell.line}</td>
      <td class={props.changed ? (props.kind === "old" ? "del" : "add") : "ctx"}>
        <Words segments={props.cell.segments} />
      </td>
    </>
  ) : (
    <>
      <td class="ln"></td>
      <td class="empty"></td>
    </>
  );

function SideBySide(props: { rows: Row[] }) {
  return (
    <table class="diff side" id="diff-table">
      <thead>
        <tr>
          <th class="ln">Old</th>
          <th>Old text</th>
          <th class="ln">New</th>
          <th>New text</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) =>
          row.kind === "fold" ? (
            <Fold row={row} colspan={4} />
          ) : (
            <tr class={row.kind}>
              <SideCell cell={row.old} kind="old" changed={row.kind === "change"} />
              <SideCell cell={row.new} kind="new" changed={row.kind === "change"} />
            </tr>
          ),
        )}
      </tbody>
    </table>
  );
}

function Inline(props: { rows: Row[] }) {
  const out: unknown[] = [];
  // Within a change the removed lines come first, then the added ones, as in diff -u.
  let olds: Cell[] = [],
    news: Cell[] = [];
  const flush = () => {
    for (const cell of olds)
      out.push(
        <tr class="change">
          <td class="ln">{cell.line}</td>
          <td class="ln"></td>
          <td class="sign">-</td>
          <td class="del">
            <Words segments={cell.segments} />
          </td>
        </tr>,
      );
    for (const cell of news)
      out.push(
        <tr class="change">
          <td class="ln"></td>
          <td class="ln">{cell.line}</td>
          <td class="sign">+</td>
          <td class="add">
            <Words segments={cell.segments} />
          </td>
        </tr>,
      );
    olds = [];
    news = [];
  };
  for (const row of props.rows) {
    if (row.kind === "change") {
      if (row.old) olds.push(row.old);
      if (row.new) news.push(row.new);
      continue;
    }
    flush();
    out.push(
      row.kind === "fold" ? (
        <Fold row={row} colspan={4} />
      ) : (
        <tr class="context">
          <td class="ln">{row.old.line}</td>
          <td class="ln">{row.new.line}</td>
          <td class="sign"> </td>
          <td class="ctx">
            <Words segments={row.new.segments} />
          </td>
        </tr>
      ),
    );
  }
  flush();
  return (
    <table class="diff inline" id="diff-table">
      <thead>
        <tr>
          <th class="ln">Old</th>
          <th class="ln">New</th>
          <th class="sign">
            <span class="visually-hidden">Change</span>
          </th>
          <th>Text</th>
        </tr>
      </thead>
      <tbody>{out}</tbody>
    </table>
  );
}

/**
 * Two versions compared by the API's compare (same options, same defaults from the settings, same scope): side by
 * side or inline, changed words marked inside changed lines, unchanged stretches folded, compare exclusions on or off.
 */
export function registerDiffPage(web: Hono<WebEnv>): void {
  web.get("/configs/diff", requirePage("configs.read"), async (c) => {
    const { view: rawView, ...rest } = c.req.query();
    const view = (VIEWS as readonly string[]).includes(rawView ?? "") ? (rawView as (typeof VIEWS)[number]) : "side";
    const query = routeQuery(diffConfigsRoute, rest);
    const { db } = c.var.services;
    const defaults = (await getSettings(db)).settings.compare;
    const request = {
      from: query.from,
      to: query.to,
      context: query.context ?? defaults.context_lines,
      ignoreWhitespace:
        query.ignore_whitespace === undefined ? defaults.ignore_whitespace : query.ignore_whitespace === "true",
      ignoreCase: query.ignore_case === "true",
      exclusions: query.exclusions === "true",
    };
    const comparison = await compareConfigs(db, c.var.auth.scope, request);
    const { from, to, diff } = comparison;
    const rows = diffRows(diff.hunks, from.lines, to.lines);
    const flag = (on: boolean) => (on ? "true" : "false");
    return renderPage(c, 200, {
      title: `Diff ${from.device_name} v${from.version} → v${to.version}`,
      session: c.var.session,
      children: (
        <section class="card">
          <p class="muted">
            <a href={`/devices/${to.device_id}`}>{to.device_name}</a>
          </p>
          <h1>
            <code>{from.command}</code>: <a href={`/configs/${from.id}`}>{`${from.device_name} v${from.version}`}</a> →{" "}
            <a href={`/configs/${to.id}`}>{`${to.device_name} v${to.version}`}</a>
          </h1>
          <p id="diff-summary">
            {diff.hunks.length
              ? `${diff.added} line${diff.added === 1 ? "" : "s"} added, ${diff.removed} removed`
              : "No differences with these options."}
          </p>
          <form method="get" action="/configs/diff" class="filters">
            <input type="hidden" name="from" value={String(from.id)} />
            <input type="hidden" name="to" value={String(to.id)} />
            <div class="field">
              <label for="diff-view">View</label>
              <select id="diff-view" name="view">
                <option value="side" selected={view === "side"}>
                  Side by side
                </option>
                <option value="inline" selected={view === "inline"}>
                  Inline
                </option>
              </select>
            </div>
            <div class="field">
              <label for="diff-context">Context lines</label>
              <input type="number" id="diff-context" name="context" min="0" max="100" value={String(request.context)} />
            </div>
            <div class="field">
              <label for="diff-exclusions">Compare exclusions</label>
              <select id="diff-exclusions" name="exclusions">
                <option value="false" selected={!request.exclusions}>
                  Compare every line
                </option>
                <option value="true" selected={request.exclusions}>
                  Leave out excluded lines
                </option>
              </select>
            </div>
            <div class="field">
              <label for="diff-whitespace">Whitespace</label>
              <select id="diff-whitespace" name="ignore_whitespace">
                <option value="false" selected={!request.ignoreWhitespace}>
                  Counts
                </option>
                <option value="true" selected={request.ignoreWhitespace}>
                  Ignored
                </option>
              </select>
            </div>
            <div class="field">
              <label for="diff-case">Letter case</label>
              <select id="diff-case" name="ignore_case">
                <option value="false" selected={!request.ignoreCase}>
                  Counts
                </option>
                <option value="true" selected={request.ignoreCase}>
                  Ignored
                </option>
              </select>
            </div>
            <div class="field">
              <button type="submit">Compare</button>
            </div>
          </form>
          <p class="actions">
            <a href={hrefWith(c, { view: view === "side" ? "inline" : "side" })}>
              {view === "side" ? "Inline view" : "Side-by-side view"}
            </a>
            <a href={hrefWith(c, { exclusions: flag(!request.exclusions) })}>
              {request.exclusions ? "Compare every line" : "Apply compare exclusions"}
            </a>
            {request.context < 100 && <a href={hrefWith(c, { context: "100" })}>Unfold more (100 lines of context)</a>}
          </p>
          {diff.hunks.length > 0 && (
            <div class="table-wrap">{view === "side" ? <SideBySide rows={rows} /> : <Inline rows={rows} />}</div>
          )}
        </section>
      ),
    });
  });
}

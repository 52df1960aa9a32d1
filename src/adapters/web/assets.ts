import type { Hono } from "hono";
import type { WebEnv } from "./env.ts";
import { fnv1a } from "../../kernel/fnv1a.ts";

/** The whole look: served by the app itself so the interface works with no Internet access. */
const CSS = `
:root { --fg:#1d2430; --muted:#5f6b7a; --line:#d8dee6; --bg:#f5f7fa; --card:#fff; --accent:#1f5fbf; --accent-fg:#fff;
  --ok:#1d7a3a; --bad:#b3261e; --warn-bg:#fff6db; --warn-line:#e7c460; --code:#f0f3f7; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif; color:var(--fg); background:var(--bg); }
a { color:var(--accent); }
code, pre, .mono { font-family: ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace; font-size:13px; }
code { background:var(--code); padding:1px 4px; border-radius:3px; }
pre { background:var(--code); padding:12px; border-radius:6px; overflow:auto; white-space:pre-wrap; word-break:break-word; }
main { max-width:1200px; margin:24px auto; padding:0 20px; }
h1 { font-size:24px; margin:0 0 16px; } h2 { font-size:19px; margin:24px 0 12px; } h3 { font-size:16px; margin:18px 0 8px; }
.topbar { display:flex; align-items:center; gap:24px; padding:10px 20px; background:#17202e; color:#e8edf3; }
.topbar a { color:#e8edf3; text-decoration:none; } .topbar .brand { font-weight:700; font-size:17px; }
.topnav { display:flex; gap:16px; align-items:center; } .topnav .muted { color:#9aa7b7; }
.topnav a[aria-current=page], .topnav summary.current { font-weight:700; }
.menu-group { position:relative; }
.menu-group summary { cursor:pointer; list-style:none; white-space:nowrap; }
.menu-group summary::-webkit-details-marker { display:none; }
.menu-group summary::after { content:" \\25BE"; color:#9aa7b7; }
.menu-group[open] summary::after { content:" \\25B4"; }
.menu-items { position:absolute; top:calc(100% + 10px); left:-14px; z-index:20; min-width:14em; display:flex; flex-direction:column;
  padding:6px 0; background:#17202e; border-radius:0 0 8px 8px; box-shadow:0 6px 16px rgba(0,0,0,.25); }
.menu-items a { padding:7px 14px; } .menu-items a:hover { background:#26344a; }
.menu-group:not([open]) .menu-items { display:none; } /* a closed group's links take no room, even off-screen */
.whoami { margin-left:auto; display:flex; gap:12px; align-items:center; white-space:nowrap; } .whoami .muted { color:#9aa7b7; }
.muted { color:var(--muted); }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:20px; margin-bottom:20px; }
.card > h1:first-child, .card > h2:first-child { margin-top:0; }
.narrow { max-width:420px; margin:64px auto; }
.login-banner { white-space:pre-line; border-left:3px solid var(--line); padding:4px 10px; }
.problem h1 { color:var(--bad); }
label { display:block; font-weight:600; margin:12px 0 4px; }
input[type=text], input[type=password] { width:100%; padding:8px 10px; border:1px solid var(--line); border-radius:6px; font:inherit; }
button, .button { display:inline-block; padding:7px 14px; border-radius:6px; border:1px solid var(--accent); background:var(--accent);
  color:var(--accent-fg); font:inherit; cursor:pointer; text-decoration:none; }
button.secondary, .button.secondary { background:#fff; color:var(--accent); }
button.danger { background:#fff; color:var(--bad); border-color:var(--bad); }
.link-button { background:none; border:none; color:inherit; padding:0; text-decoration:underline; cursor:pointer; }
form.inline { display:inline; margin:0; }
.actions { display:flex; gap:8px; flex-wrap:wrap; align-items:center; margin-top:14px; }
.alert { padding:10px 14px; border-radius:6px; margin:0 0 16px; border:1px solid; }
.alert.error { background:#fdecea; border-color:#f0b4ae; color:var(--bad); }
.alert.success { background:#e9f6ec; border-color:#a9d8b4; color:var(--ok); }
.alert.warning { background:var(--warn-bg); border-color:var(--warn-line); color:#6b5200; }
.tabs { display:flex; gap:4px; border-bottom:1px solid var(--line); margin-bottom:20px; }
.tabs a { padding:9px 16px; text-decoration:none; color:var(--muted); border:1px solid transparent; border-bottom:none; border-radius:6px 6px 0 0; }
.tabs a[aria-current=page] { color:var(--fg); background:var(--card); border-color:var(--line); margin-bottom:-1px; font-weight:600; }
table { width:100%; border-collapse:collapse; background:var(--card); }
th, td { text-align:left; padding:8px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-size:13px; color:var(--muted); font-weight:600; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; border:1px solid var(--line); }
.badge.active { color:var(--ok); border-color:#a9d8b4; } .badge.revoked, .badge.expired, .badge.absent { color:var(--bad); border-color:#f0b4ae; }
.badge.present { color:var(--ok); border-color:#a9d8b4; }
.abilities { display:flex; flex-wrap:wrap; gap:4px; } .abilities code { font-size:12px; }
.ability-grid td, .ability-grid th { padding:4px 10px; } .ability-grid { width:auto; }
.ability-grid label { display:inline; font-weight:normal; margin:0; }
.secret { display:flex; gap:8px; align-items:center; } .secret code { font-size:14px; padding:6px 10px; word-break:break-all; }
.method { display:inline-block; min-width:64px; font-weight:700; }
.method.get { color:#1d7a3a; } .method.post { color:#1f5fbf; } .method.put, .method.patch { color:#8a5a00; } .method.delete { color:var(--bad); }
.endpoint { border-top:1px solid var(--line); padding-top:10px; }
.versions { display:flex; gap:8px; margin-bottom:12px; }
.versions a[aria-current=page] { font-weight:700; text-decoration:none; color:var(--fg); }
.toc { columns: 3 220px; margin:0 0 12px; padding-left:18px; }
.copied { color:var(--ok); font-size:13px; }
.counts { display:flex; flex-wrap:wrap; gap:12px; margin:0; padding:0; list-style:none; }
.counts li { border:1px solid var(--line); border-radius:8px; padding:10px 16px; min-width:120px; }
.counts strong { display:block; font-size:26px; }
.badge.ok { color:var(--ok); border-color:#a9d8b4; } .badge.warning { color:#6b5200; border-color:var(--warn-line); } .badge.failed { color:var(--bad); border-color:#f0b4ae; }
.pulse { width:100%; max-width:720px; height:auto; }
.visually-hidden { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); white-space:nowrap; }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible { outline:3px solid #f0a30a; outline-offset:2px; }
select, input[type=search], input[type=number] { padding:7px 8px; border:1px solid var(--line); border-radius:6px; font:inherit; background:#fff; max-width:100%; }
input[type=search] { width:100%; }
.filters { display:flex; flex-wrap:wrap; gap:10px; align-items:flex-end; margin-bottom:12px; }
.filters .field label { margin-top:0; } .filters .grow { flex:1 1 220px; }
.pager { display:flex; gap:14px; align-items:center; margin:8px 0; color:var(--muted); flex-wrap:wrap; }
.table-wrap { overflow-x:auto; position:relative; } /* relative: hidden labels (absolute) stay inside the scrolling box */
th a { color:inherit; }
.badge.status-up, .badge.compliant { color:var(--ok); border-color:#a9d8b4; }
.badge.status-unreachable, .badge.not_compliant { color:var(--bad); border-color:#f0b4ae; }
.badge.disabled, .badge.status-unknown, .badge.not_evaluated { color:var(--muted); }
.details { display:grid; grid-template-columns:max-content 1fr; gap:4px 16px; margin:0; }
.details dt { color:var(--muted); } .details dd { margin:0; overflow-wrap:anywhere; }
.topnav { flex-wrap:wrap; }
.config.numbered { white-space:pre; overflow:auto; padding:8px 0; word-break:normal; }
.numbered .line { display:block; padding:0 12px 0 0; min-height:1.4em; }
.numbered .line::before { content:attr(data-n); display:inline-block; width:4.5em; padding-right:1em; text-align:right; color:var(--muted); user-select:none; }
.numbered .line.hit { background:#fff1b8; } .numbered .line.current { background:#ffd84d; }
.find { display:flex; gap:8px; align-items:center; flex:1 1 260px; }
.diff { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace; font-size:13px; table-layout:auto; }
.diff td { padding:1px 8px; border-bottom:none; white-space:pre-wrap; word-break:break-all; }
.diff td.ln { color:var(--muted); text-align:right; width:1%; white-space:nowrap; user-select:none; }
.diff td.sign { width:1%; user-select:none; }
.diff td.del { background:#fdecea; } .diff td.add { background:#e6f4ea; } .diff td.empty { background:#f5f7fa; }
.diff td.del mark { background:#f3b7b0; color:inherit; } .diff td.add mark { background:#a8dcb5; color:inherit; }
.diff tr.fold td { background:#eef2f7; color:var(--muted); text-align:center; font-family:system-ui,sans-serif; }
.diff.side td.del, .diff.side td.add, .diff.side td.ctx, .diff.side td.empty { width:49%; }
.hit-line mark, .search-hit mark { background:#ffe27a; color:inherit; }
.search-hit { border-top:1px solid var(--line); padding-top:8px; } .search-hit h2 { font-size:16px; margin:8px 0 2px; }
.matches { white-space:pre-wrap; } .matches .n { display:inline-block; min-width:4em; color:var(--muted); user-select:none; }
.matches a.hit-line { color:inherit; text-decoration:none; font-weight:600; } .matches .ctx-line { color:var(--muted); }
label.check { display:inline-flex; gap:6px; align-items:center; font-weight:normal; margin:0 12px 0 0; }
fieldset.checks { border:none; padding:0; margin:0; }
.added { color:var(--ok); } .removed { color:var(--bad); }
.badge.run-succeeded, .badge.item-succeeded, .badge.item-unchanged { color:var(--ok); border-color:#a9d8b4; }
.badge.run-failed, .badge.item-failed { color:var(--bad); border-color:#f0b4ae; }
.badge.run-running, .badge.item-running, .badge.item-queued { color:#6b5200; border-color:var(--warn-line); }
tr[aria-current=true] td { background:#eef4fd; }
.row-form { display:flex; gap:6px; align-items:center; flex-wrap:wrap; margin:0; }
.row-form input[type=password] { width:auto; min-width:10em; }
td .row-form .link-button, .actions .link-button { color:var(--accent); }
.grid-form { display:grid; grid-template-columns:repeat(auto-fit, minmax(200px, 1fr)); gap:4px 16px; align-items:end; }
.scope-form { margin-top:8px; } .scope-form select { min-width:12em; display:block; }
.button.danger { background:#fff; color:var(--bad); border-color:var(--bad); }
.device-form, .entity-form { align-items:start; }
.entity-form .field select, .entity-form .field input[type=text], .device-form .field select { width:100%; }
textarea { width:100%; padding:8px 10px; border:1px solid var(--line); border-radius:6px; font:inherit; }
textarea.code { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace; font-size:13px; }
.field .hint { font-size:13px; }
.field-error { color:var(--bad); font-size:13px; margin-top:2px; }
.field.invalid input, .field.invalid select, .field.invalid textarea { border-color:var(--bad); }
.next-steps li { margin:6px 0; } .next-steps .done { color:var(--ok); }
pre.snippet { margin:0; max-height:8em; }
td time { white-space:nowrap; }
/* Text-heavy columns keep a readable width on a phone: their table scrolls sideways instead. */
td.wide { min-width:16em; }
.chart { width:100%; min-height:240px; margin:8px 0 16px; overflow:hidden; }
.rule-lines { margin:4px 0 0; padding-left:18px; } .rule-lines code { white-space:pre-wrap; }
.remediation { margin:4px 0 0; }
textarea.definition { min-height:16em; }
.line-problems { margin:6px 0 0; padding-left:18px; color:var(--bad); font-size:13px; }
.progress { display:flex; flex-wrap:wrap; gap:8px; margin:8px 0; padding:0; list-style:none; }
.bulk-delete-list { margin:12px 0; padding:0; list-style:none; }
.bulk-delete-list li { padding:6px 0; border-bottom:1px solid var(--line); }
pre.diff-text span { display:block; } pre.diff-text .hunk { color:var(--muted); }
details.output summary { cursor:pointer; } details.output pre { max-height:24em; }
ul.links { padding-left:18px; }
/* A group of fields across the whole form (a snippet task's deploy settings), laid out as a grid of its own. */
fieldset.form-row { grid-column:1 / -1; border:1px solid var(--line); border-radius:6px; padding:8px 12px; margin:4px 0 8px; }
h1.mono { font-size:20px; overflow-wrap:anywhere; } .whoami { white-space:nowrap; }
.numbered .line-problem { color:var(--bad); background:#fdecea; } .numbered mark { background:#ffe27a; color:inherit; }
@media (max-width: 700px) {
  .topbar { flex-wrap:wrap; gap:8px 16px; position:relative; } .whoami { margin-left:0; }
  .topnav { gap:14px; } .menu-group { position:static; }
  .menu-items { top:100%; left:0; right:0; min-width:0; display:grid; grid-template-columns:1fr 1fr; border-radius:0; }
  .menu-items a { padding:11px 20px; }
  main { padding:0 10px; margin:12px auto; } .card { padding:14px; }
  .details { grid-template-columns:1fr; } .details dt { font-weight:600; }
}
`;

/**
 * Progressive help only: every page works without it. Copy buttons (clipboard API, or a selection fallback on
 * plain-HTTP origins where the API is missing) and confirmation before destructive forms.
 */
const JS = `
(function () {
  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text; area.setAttribute("readonly", ""); area.style.position = "fixed"; area.style.opacity = "0";
    document.body.appendChild(area); area.select();
    var ok = false; try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text).catch(function () { return fallbackCopy(text); });
    return fallbackCopy(text);
  }
  function report(button, message) {
    var note = button.parentNode.querySelector(".copied");
    if (!note) { note = document.createElement("span"); note.className = "copied"; note.setAttribute("role", "status"); button.parentNode.appendChild(note); }
    note.textContent = message;
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy-from],[data-copy-url]");
    if (!button) return;
    event.preventDefault();
    var text = button.hasAttribute("data-copy-from")
      ? Promise.resolve(document.getElementById(button.getAttribute("data-copy-from")).textContent)
      : fetch(button.getAttribute("data-copy-url"), { credentials: "same-origin" }).then(function (r) {
          if (!r.ok) throw new Error("HTTP " + r.status); return r.text();
        });
    text.then(copyText).then(function () { report(button, "Copied"); }, function (e) { report(button, "Copy failed: " + e.message); });
  });
  // A running job's progress: poll its status until it finishes, then show the page with the outcome.
  var progress = document.querySelector("[data-poll]");
  if (progress) {
    var poll = function () {
      fetch(progress.getAttribute("data-poll"), { credentials: "same-origin", headers: { accept: "application/json" } })
        .then(function (r) { return r.json(); })
        .then(function (job) {
          if (job.state === "finished") { window.location.replace(progress.getAttribute("data-done")); return; }
          progress.firstChild.textContent = (progress.getAttribute("data-what") || "Download") + " " + job.id + " " + job.state + "\u2026";
          setTimeout(poll, 1000);
        }, function () { setTimeout(poll, 3000); });
    };
    setTimeout(poll, 1000);
  }
  // Find in page: marks the lines holding the text (any case), Enter goes to the next one.
  var find = document.querySelector("[data-find]");
  if (find) {
    var lines = document.getElementById(find.getAttribute("data-find")).querySelectorAll(".line");
    var count = document.getElementById("find-count");
    var hits = [], at = -1;
    find.addEventListener("input", function () {
      var term = find.value.toLowerCase();
      hits = []; at = -1;
      for (var i = 0; i < lines.length; i++) {
        var hit = term !== "" && lines[i].textContent.toLowerCase().indexOf(term) !== -1;
        lines[i].classList.toggle("hit", hit); lines[i].classList.remove("current");
        if (hit) hits.push(lines[i]);
      }
      count.textContent = term === "" ? "" : hits.length + (hits.length === 1 ? " line" : " lines");
    });
    find.addEventListener("keydown", function (event) {
      if (event.key !== "Enter" || !hits.length) return;
      event.preventDefault();
      if (at >= 0) hits[at].classList.remove("current");
      at = (at + (event.shiftKey ? hits.length - 1 : 1)) % hits.length;
      hits[at].classList.add("current");
      hits[at].scrollIntoView({ block: "center" });
      count.textContent = (at + 1) + " of " + hits.length + " lines (line " + hits[at].getAttribute("data-n") + ")";
    });
  }
  // Charts: a [data-chart] box holds its series as JSON ({x: [unix seconds], y: axis label, series: [{label,
  // color, values}]}); uPlot draws them, as wide as the box. The table beside each chart holds the same numbers.
  if (window.uPlot) {
    // Counts and percentages: ticks on whole numbers only.
    var WHOLE = [1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000];
    var boxes = document.querySelectorAll("[data-chart]");
    for (var b = 0; b < boxes.length; b++) {
      var box = boxes[b], spec = JSON.parse(box.getAttribute("data-chart"));
      var series = [{}], data = [spec.x];
      for (var s = 0; s < spec.series.length; s++) {
        series.push({ label: spec.series[s].label, stroke: spec.series[s].color, width: 2, points: { show: true } });
        data.push(spec.series[s].values);
      }
      box.textContent = "";
      var plot = new window.uPlot({ width: Math.max(box.clientWidth, 240), height: 240, series: series,
        axes: [{}, { label: spec.y, incrs: WHOLE }], scales: { y: spec.max ? { range: [0, spec.max] } : {} } }, data, box);
      // As wide as its box whenever the window changes (a phone turned, a window resized).
      (function (plot, box) {
        window.addEventListener("resize", function () { plot.setSize({ width: Math.max(box.clientWidth, 240), height: 240 }); });
      })(plot, box);
    }
  }
  // The menu's dropdowns (they open and close without this): one open at a time, closed by a click elsewhere or
  // Escape, which gives the focus back to the group's label.
  var groups = document.querySelectorAll(".topnav details");
  function closeMenus(except) {
    for (var g = 0; g < groups.length; g++) if (groups[g] !== except) groups[g].open = false;
  }
  for (var g = 0; g < groups.length; g++) {
    groups[g].addEventListener("toggle", function (event) { if (event.target.open) closeMenus(event.target); });
  }
  document.addEventListener("click", function (event) {
    if (!event.target.closest(".topnav details")) closeMenus(null);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    var open = document.querySelector(".topnav details[open]");
    if (open) { open.open = false; open.querySelector("summary").focus(); }
  });
  document.addEventListener("submit", function (event) {
    // A form's own question, or that of the button that sent it (a form with a harmless and a risky button).
    var message = (event.submitter && event.submitter.getAttribute("data-confirm")) || event.target.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  });
})();
`;

/** Changes whenever either asset does, so pages can let browsers cache assets for a long time. */
export const ASSET_VERSION = fnv1a(CSS + JS).toString(36);

export function registerAssets(web: Hono<WebEnv>): void {
  const serve = (body: string, type: string) => (c: import("hono").Context<WebEnv>) => {
    c.header("Cache-Control", "public, max-age=31536000, immutable");
    c.header("Content-Type", type);
    return c.body(body);
  };
  web.get("/assets/netkeep.css", serve(CSS, "text/css; charset=utf-8"));
  web.get("/assets/netkeep.js", serve(JS, "text/javascript; charset=utf-8"));
}

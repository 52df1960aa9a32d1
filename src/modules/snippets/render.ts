/**
 * Snippet variables, rConfig's `{name}`: a name of letters, digits and underscores in braces. A brace followed
 * by anything else (Junos' `system {`, a Linux `${HOME}` is `$` + `{HOME}` and is a variable) stays as written.
 */
const VARIABLE = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The variables a text uses, in order of first use. */
export function snippetVariables(text: string): string[] {
  return [...new Set([...text.matchAll(VARIABLE)].map((m) => m[1]!))];
}

/** What a device contributes: its fields as `device_*` variables and each custom attribute under its own name. */
export type DeviceForRender = {
  id: number;
  name: string;
  ip: string;
  model: string;
  vendorName: string | null;
  port: number | null;
  custom: Record<string, string | number | boolean | null>;
};

export function deviceVariables(d: DeviceForRender): Record<string, string> {
  const own: Record<string, string> = {
    device_id: String(d.id),
    device_name: d.name,
    device_ip: d.ip,
    device_model: d.model,
    device_vendor: d.vendorName ?? "",
    ...(d.port !== null ? { device_port: String(d.port) } : {}),
  };
  const custom = Object.fromEntries(
    Object.entries(d.custom)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, String(v)]),
  );
  return { ...custom, ...own };
}

export type Rendered = { ok: true; lines: string[] } | { ok: false; missing: string[] };

/**
 * The exact lines a device gets: every variable replaced, dynamic variables (the request's) before the device's
 * own, blank lines dropped. A variable with no value makes the whole render fail, naming every one missing:
 * nothing is pushed with a hole in it.
 */
export function renderLines(text: string, values: Record<string, string>): Rendered {
  const missing = snippetVariables(text).filter((name) => !Object.hasOwn(values, name));
  if (missing.length) return { ok: false, missing };
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.replace(VARIABLE, (_, name: string) => values[name]!))
    .filter((line) => line.trim() !== "");
  return { ok: true, lines };
}

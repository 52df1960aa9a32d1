import { describe, expect, it } from "vitest";
import { deviceVariables, renderLines, snippetVariables } from "./render.ts";

describe("snippet rendering", () => {
  it("replaces request and device variables and leaves braces that are not variables alone", () => {
    const device = deviceVariables({
      id: 7,
      name: "core-1",
      ip: "10.0.0.1",
      model: "C9300",
      vendorName: "Cisco",
      port: null,
      custom: { site: "ams", rack: 4 },
    });
    const out = renderLines("hostname {device_name}\nsystem {\n\n snmp location {site}-{rack} {ntp}\n}", {
      ...device,
      ntp: "10.9.9.9",
    });
    expect(out).toEqual({ ok: true, lines: ["hostname core-1", "system {", " snmp location ams-4 10.9.9.9", "}"] });
  });

  it("names every missing variable instead of rendering a line with a hole", () => {
    expect(renderLines("ntp server {ntp}\nlogging host {syslog}\nip {ntp}", {})).toEqual({
      ok: false,
      missing: ["ntp", "syslog"],
    });
  });

  it("lists a text's variables once each, in order", () => {
    expect(snippetVariables("a {x} {y_1} {x} { z } {9}")).toEqual(["x", "y_1"]);
  });
});

import { describe, expect, it } from "vitest";
import { describeRpcError, netconfConfigText, rpcErrorsOf, xmlFragmentProblem } from "./netconf-xml.ts";

const reply = (data: string, attrs = "") =>
  `<?xml version="1.0"?><rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="1"${attrs}><data>${data}</data></rpc-reply>`;
const NONE = { secrets: [], drop: [] };

describe("netconfConfigText", () => {
  it("writes attributes by name after the namespace declarations, and no declaration already in force", () => {
    const text = netconfConfigText(
      reply(`<a z="1" xmlns:p="urn:p" b="2" xmlns="urn:a"><b xmlns="urn:a" xmlns:p="urn:other"/></a>`),
      NONE,
    );
    expect(text).toBe(`<a xmlns="urn:a" xmlns:p="urn:p" b="2" z="1">\n  <b xmlns:p="urn:other"/>\n</a>\n`);
  });

  it("keeps element order, trims text, escapes what must be escaped, drops comments and PIs, reads CDATA as text", () => {
    const text = netconfConfigText(
      reply(`<c><!-- note --><y> 2 </y><?pi x?><x a="&quot;&lt;">a &amp; b</x><d><![CDATA[<raw>]]></d></c>`),
      NONE,
    );
    expect(text).toBe(`<c>\n  <y>2</y>\n  <x a="&quot;&lt;">a &amp; b</x>\n  <d>&lt;raw&gt;</d>\n</c>\n`);
  });

  it("masks the text of secret elements and all their descendants, by path suffix", () => {
    const data = `<snmp><community><name>Comm-1</name><view>all</view></community></snmp><name>keep</name><psk><ascii-text>Psk-1</ascii-text></psk>`;
    const text = netconfConfigText(reply(data), { secrets: ["community/name", "psk"], drop: [] });
    expect(text).not.toMatch(/Comm-1|Psk-1/);
    expect(text).toContain("<name>keep</name>");
    expect(text).toContain("<view>all</view>");
    expect(text).toContain("<ascii-text>(secret removed)</ascii-text>");
  });

  it("leaves out dropped elements and attributes (local names: prefixes do not matter)", () => {
    const data = `<configuration xmlns:junos="urn:j" junos:changed-seconds="5" id="1"><uptime>5</uptime><x><uptime>7</uptime></x></configuration>`;
    expect(netconfConfigText(reply(data), { secrets: [], drop: ["configuration/@changed-seconds", "uptime"] })).toBe(
      `<configuration xmlns:junos="urn:j" id="1">\n  <x/>\n</configuration>\n`,
    );
  });

  it("is empty for empty data, and refuses what is no get-config answer", () => {
    expect(netconfConfigText(reply(""), NONE)).toBe("");
    expect(() => netconfConfigText(`<rpc-reply><ok/></rpc-reply>`, NONE)).toThrow("holds no <data>");
    expect(() => netconfConfigText(`<hello/>`, NONE)).toThrow("no <rpc-reply>");
    expect(() => netconfConfigText(reply("<a>"), NONE)).toThrow("not well-formed XML");
  });
});

describe("rpc-errors", () => {
  it("are read in words, warnings told apart", () => {
    const errors =
      rpcErrorsOf(`<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><rpc-error><error-type>protocol</error-type><error-tag>unknown-element</error-tag>
      <error-severity>error</error-severity><error-path>/rpc/get-config</error-path><error-message xml:lang="en">bad filter</error-message>
      <error-info><bad-element>foo</bad-element></error-info></rpc-error><rpc-error><error-severity>warning</error-severity><error-tag>x</error-tag></rpc-error></rpc-reply>`);
    expect(errors.map((e) => e.severity)).toEqual(["error", "warning"]);
    expect(describeRpcError(errors[0]!)).toBe("unknown-element: bad filter (at /rpc/get-config; bad-element: foo)");
  });
});

it("xmlFragmentProblem says what is wrong with a filter", () => {
  expect(xmlFragmentProblem(`<native xmlns="urn:x"/><other/>`)).toBeUndefined();
  expect(xmlFragmentProblem(`<native>`)).toBeTruthy();
});

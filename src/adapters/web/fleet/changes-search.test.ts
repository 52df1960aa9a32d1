import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWebTestContext, type WebClient, type WebTestContext } from "../../../../test/web/client.ts";
import { createDevice, day, storeVersion } from "../../../modules/configs/test-fixtures.ts";
import { indexAllPending } from "../../../modules/configs/search/search-index.ts";

/** The changes feed and the configuration search: the API's queries and scope, through pages. */
let t: WebTestContext;
let admin: WebClient;
let core: { v1: number; v2: number };
let edgeV1: number;

beforeAll(async () => {
  t = await createWebTestContext();
  const token = await t.token();
  const coreId = await createDevice(t, token, { device_name: "core-1", device_tags: ["core"] });
  const edgeId = await createDevice(t, token, { device_name: "edge-1", device_tags: ["edge"] });
  core = {
    v1: (await storeVersion(t, { deviceId: coreId, text: "hostname core-1\nntp server 192.0.2.50\n", at: day(1) }))
      .configId,
    v2: (
      await storeVersion(t, {
        deviceId: coreId,
        text: "hostname core-1\nntp server 192.0.2.51\nsnmp-server community <public>\n",
        at: day(3),
        trigger: "download_now",
      })
    ).configId,
  };
  edgeV1 = (await storeVersion(t, { deviceId: edgeId, text: "hostname edge-1\nntp server 192.0.2.50\n", at: day(2) }))
    .configId;
  await indexAllPending(t.db);
  await t.user({ username: "boss" });
  admin = t.client();
  await admin.login("boss");
});
afterAll(() => t.close());

const changeRows = (html: string) =>
  [
    ...html.matchAll(
      /<tr><td><time[^>]*>[^<]*<\/time><\/td><td><a href="\/devices\/\d+">([^<]+)<\/a><\/td><td><code>[^<]*<\/code><\/td><td><a href="([^"]+)">/g,
    ),
  ].map((m) => `${m[1]} ${m[2]}`);

describe("the changes feed", () => {
  it("lists every change newest first, each linking to its diff (a first version to itself)", async () => {
    expect(changeRows(await (await admin.get("/changes")).text())).toEqual([
      `core-1 /configs/diff?from=${core.v1}&amp;to=${core.v2}`,
      `edge-1 /configs/${edgeV1}`,
      `core-1 /configs/${core.v1}`,
    ]);
  });

  it("filters with the API's filters, and shows a scoped user only their devices' changes", async () => {
    expect(changeRows(await (await admin.get("/changes?filter[trigger]=download_now")).text())).toEqual([
      `core-1 /configs/diff?from=${core.v1}&amp;to=${core.v2}`,
    ]);
    expect(changeRows(await (await admin.get("/changes?filter[device_tags]=edge&filter[trigger]=")).text())).toEqual(
      [],
    );
    expect(changeRows(await (await admin.get("/changes?filter[device_tags]=edge")).text())).toEqual([
      `edge-1 /configs/${edgeV1}`,
    ]);
    await t.role({ name: "edge-readers", permissions: ["configs.read"], tags: ["edge"] });
    await t.user({ username: "edgy", role: "edge-readers" });
    const scoped = t.client();
    await scoped.login("edgy");
    expect(changeRows(await (await scoped.get("/changes")).text())).toEqual([`edge-1 /configs/${edgeV1}`]);
    expect((await admin.get("/changes?filter[trigger]=nightly")).status).toBe(422);
  });

  it("says which changes changed secret values, whose texts cannot show it", async () => {
    await t.db.run(sql`update configs set secrets_changed = 1 where id = ${core.v2}`);
    try {
      const html = await (await admin.get("/changes")).text();
      expect(html.match(/<span class="secrets-changed"[^>]*> secrets changed<\/span>/g)).toHaveLength(1);
      expect(html).toMatch(new RegExp(`to=${core.v2}">[^<]*</a></td><td>.*?secrets changed`));
    } finally {
      await t.db.run(sql`update configs set secrets_changed = 0 where id = ${core.v2}`);
    }
  });
});

describe("the search page", () => {
  const hits = (html: string) =>
    [...html.matchAll(/<a class="hit-line" href="([^"]+)"><span class="n">(\d+)<\/span>(.*?)\n<\/a>/g)].map(
      (m) => `${m[1]} ${m[3]}`,
    );

  it("finds lines in the latest versions, the matched text marked, linking to the line", async () => {
    expect(hits(await (await admin.get("/search?q=192.0.2.5")).text())).toEqual([
      `/configs/${core.v2}#L2 ntp server <mark>192.0.2.5</mark>1`,
      `/configs/${edgeV1}#L2 ntp server <mark>192.0.2.5</mark>0`,
    ]);
  });

  it("stops reading at the first match past the page: the next page is linked, the total given as a lower bound", async () => {
    // Both devices' latest versions hold "ntp server"; one per page, the second page exists but is not counted.
    const first = await (await admin.get("/search?q=ntp%20server&per_page=1")).text();
    expect(hits(first)).toHaveLength(1);
    expect(first).toContain("1-1 of more than 1 configurations");
    expect(first).toMatch(/rel="next"/);
    const second = await (await admin.get("/search?q=ntp%20server&per_page=1&page=2")).text();
    expect(hits(second)).toHaveLength(1);
    expect(second).toContain("2-2 of 2 configurations");
  });

  it("takes the API's options: all versions, regular expressions, filters, and shows context", async () => {
    expect(hits(await (await admin.get("/search?q=192.0.2.50&latest_only=false")).text())).toEqual([
      `/configs/${core.v1}#L2 ntp server <mark>192.0.2.50</mark>`,
      `/configs/${edgeV1}#L2 ntp server <mark>192.0.2.50</mark>`,
    ]);
    expect(hits(await (await admin.get("/search?q=community%20%3C%5Cw%2B%3E&regex=true")).text())).toEqual([
      `/configs/${core.v2}#L3 snmp-server <mark>community &lt;public&gt;</mark>`,
    ]);
    expect(hits(await (await admin.get("/search?q=ntp&filter[device_tags]=edge")).text())).toEqual([
      `/configs/${edgeV1}#L2 <mark>ntp</mark> server 192.0.2.50`,
    ]);
    const withContext = await (await admin.get("/search?q=snmp&context=1")).text();
    expect(withContext).toContain('<span class="ctx-line"><span class="n">2</span>ntp server 192.0.2.51\n</span>');
  });

  it("answers the API's 422 for a regular expression RE2 refuses, and shows only the form without a term", async () => {
    const bad = await admin.get("/search?q=(a)%5C1&regex=true");
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("backreference");
    const empty = await admin.get("/search?q=&regex=true");
    expect(empty.status).toBe(302);
    expect(empty.headers.get("location")).toBe("/search?regex=true");
    expect(hits(await (await admin.get("/search?regex=true")).text())).toEqual([]);
  });
});

/**
 * A user's HTTP client for bench/configs.ts, in a process of its own: the bench's process holds every generated
 * version and the in-process searches' garbage (hundreds of MB of heap), whose collections a request timed
 * there would pay. Each message is one request, answered with its time and what the bench checks.
 */
/** `repeat`: the request made that many times, the last one answered (a client warmed up as a user's browser is). */
export type SearchRequestMessage = { url: string; headers: Record<string, string>; repeat?: number };
export type SearchAnswer = {
  ms: number;
  status: number;
  body: {
    data: { match_count: number }[];
    meta: { total: number; last_page: number };
    search: { configs_checked: number };
  };
};

process.on("message", async ({ url, headers, repeat = 1 }: SearchRequestMessage) => {
  let t0 = 0;
  let res: Response | undefined;
  let body: SearchAnswer["body"] | undefined;
  for (let i = 0; i < repeat; i++) {
    t0 = performance.now();
    res = await fetch(url, { headers });
    body = (await res.json()) as SearchAnswer["body"];
  }
  const ms = performance.now() - t0;
  if (!res || !body) throw new Error("repeat must be at least 1");
  process.send!({
    ms,
    status: res.status,
    body: { data: body.data?.map((h) => ({ match_count: h.match_count })), meta: body.meta, search: body.search },
  } satisfies SearchAnswer);
});
process.send!("ready");

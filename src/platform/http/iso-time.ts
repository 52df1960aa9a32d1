/**
 * An epoch-milliseconds time as Date.toISOString() writes it, for answers that write thousands (a search's
 * page of 500 hits has 1,000): toISOString costs about 1 us a call, which was most of building such a page.
 * The date part is Date's own, remembered per day; the time of day is arithmetic.
 */
const DAY_MS = 86_400_000;
const days = new Map<number, string>();

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

export function isoTime(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms >= 253_402_300_800_000) return new Date(ms).toISOString(); // before 1970 or after 9999
  const day = Math.floor(ms / DAY_MS);
  let prefix = days.get(day);
  if (prefix === undefined) {
    if (days.size >= 4096) days.clear();
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11); // "YYYY-MM-DDT"
    days.set(day, prefix);
  }
  const t = ms - day * DAY_MS;
  const s = Math.floor(t / 1000);
  return `${prefix}${pad2(Math.floor(s / 3600))}:${pad2(Math.floor(s / 60) % 60)}:${pad2(s % 60)}.${pad3(t % 1000)}Z`;
}

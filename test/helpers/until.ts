/**
 * How a test waits for something to happen: it reads the state that shows it, again and again, until the state
 * says so, instead of sleeping for a time that is long enough on an idle machine and too short on a loaded one.
 *
 * `read` (sync or async) is called up to `tries` times, `everyMs` apart; the first value `done` accepts is
 * returned. When none is, it throws naming `what` it waited for and the last value read. The bound is a number
 * of tries: a loaded machine makes each try later, so the wait stretches with it.
 */
export async function until<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean = Boolean,
  { tries = 500, everyMs = 20 }: { tries?: number; everyMs?: number } = {},
): Promise<T> {
  let value = await read();
  for (let tried = 1; !done(value); tried++) {
    if (tried >= tries) throw new Error(`waited for ${what}: not after ${tries} tries; last read: ${show(value)}`);
    await new Promise((r) => setTimeout(r, everyMs));
    value = await read();
  }
  return value;
}

/**
 * Lets what is already due on the event loop run: `turns` rounds of timers (a 0 ms timer is due a millisecond
 * later), I/O callbacks and promise jobs, and no more. For a test that shows something does *not* happen while
 * other work goes on (a write waiting for a lock stays waiting), counted in turns of the loop, not milliseconds.
 */
export async function eventLoopTurns(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) {
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setImmediate(r));
  }
}

function show(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 500 ? `${text.slice(0, 500)}...` : text;
}

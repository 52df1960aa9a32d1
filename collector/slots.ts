/** At most `size` runs of work at once; the rest wait their turn, first come first served. */
export function slots(size: number) {
  let inUse = 0;
  const waiting: (() => void)[] = [];
  return async function run<T>(work: () => Promise<T>): Promise<T> {
    if (inUse < size) inUse++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      // The slot passes straight to the next in line, so none is taken twice meanwhile.
      const next = waiting.shift();
      if (next) next();
      else inUse--;
    }
  };
}

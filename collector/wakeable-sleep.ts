/**
 * The pause of a polling loop, which wake() cuts short: so stopping, or work turning up, does not wait out the
 * interval. A wake() with nobody asleep does nothing.
 */
export function wakeableSleep() {
  let wakeUp: (() => void) | undefined;
  return {
    sleep(ms: number): Promise<void> {
      return new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          wakeUp = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        wakeUp = done;
      });
    },
    wake(): void {
      wakeUp?.();
    },
  };
}

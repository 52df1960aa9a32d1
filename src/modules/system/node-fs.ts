/** The few node:fs calls the system checks need, in callback form as Node and Deno both lend them. */
export type NodeFs = {
  statfs(path: string, cb: (err: Error | null, stats: { bavail: number; blocks: number; bsize: number }) => void): void;
  readdir(
    path: string,
    options: { withFileTypes: true; recursive: true },
    cb: (err: Error | null, entries: { name: string; parentPath: string; isFile(): boolean }[]) => void,
  ): void;
  stat(path: string, cb: (err: Error | null, stats: { size: number }) => void): void;
};

// Through process.getBuiltinModule, not an import: modules stay Web APIs only (a runtime without it gets undefined).
export const nodeFs = (
  globalThis as { process?: { getBuiltinModule?(id: string): unknown } }
).process?.getBuiltinModule?.("node:fs") as NodeFs | undefined;

export const promised = <T>(call: (cb: (err: Error | null, value: T) => void) => void) =>
  new Promise<T>((resolve, reject) => call((err, value) => (err ? reject(err) : resolve(value))));

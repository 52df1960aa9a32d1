/**
 * Calls `onGone` once when the process that started this collector with an IPC channel (the API, see
 * src/runtime/collector-process.ts) is gone. The channel is a socket pair the kernel closes when the parent
 * exits, however it exits: a SIGKILL leaves no chance to signal the child, but it still closes the socket.
 * A collector started on its own (`npm run collector`, a service manager) has no channel and is left alone.
 */
export function watchParent(onGone: () => void): void {
  if (!process.channel) return;
  process.once("disconnect", onGone);
  // The channel only listens for the close; it must not keep the process alive once everything else has stopped.
  process.channel.unref();
}

/**
 * Calls `handle` each time the API that started this collector sends `message` over the IPC channel (see
 * src/runtime/collector-process.ts). Listening does not keep the process alive: the channel stays unreferenced.
 */
export function onParentMessage(message: string, handle: () => void): void {
  if (!process.channel) return;
  process.on("message", (received) => {
    if (received === message) handle();
  });
  // Adding a "message" listener references the channel again.
  process.channel.unref();
}

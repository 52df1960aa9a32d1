/** Times in pages: UTC to the minute, readable, with the exact instant in the datetime attribute. */
export function Time(props: { at: Date | null; none: string }) {
  if (!props.at) return <span class="muted">{props.none}</span>;
  const iso = props.at.toISOString();
  return <time datetime={iso}>{iso.slice(0, 16).replace("T", " ") + " UTC"}</time>;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

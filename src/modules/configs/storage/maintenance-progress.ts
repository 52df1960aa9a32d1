/** Told how far the long steps are (a rebuild of a large index, the first recompression: minutes), one line each time. */
export type MaintenanceProgress = (line: string) => void;

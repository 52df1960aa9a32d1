/**
 * A line store's distinct lines as a search tests them (line-marks.ts): sealed into chunks of text, each line by
 * its id. The store (line-store.ts) holds them; the search needs only this view of it.
 */
export type Chunk = { readonly firstId: number; readonly text: string; readonly starts: Uint32Array };

export interface ChunkedLines {
  /** Distinct lines held (the next new line's id). */
  readonly lineCount: number;
  readonly chunks: readonly Chunk[];
  /** The chunk a sealed line is in. */
  chunkOf(id: number): number;
  /** Seals the lines added since the last chunk into one. */
  seal(): void;
}

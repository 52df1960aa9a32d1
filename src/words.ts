/** "1 device", "3 devices": the counts in messages people read. */
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

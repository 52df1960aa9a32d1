/** "1 device", "3 devices": the counts in messages people read. */
export const plural = (n: number, word: string, many = `${word}s`) => `${n} ${n === 1 ? word : many}`;

/** The singular of a plural noun phrase ("credential sets" -> "credential set", "policies" -> "policy"). */
export function singular(noun: string): string {
  if (/ies$/.test(noun)) return noun.slice(0, -3) + "y";
  if (/(ches|shes|xes|sses)$/.test(noun)) return noun.slice(0, -2);
  return noun.replace(/s$/, "");
}

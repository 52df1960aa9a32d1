/**
 * User regular expressions run in JavaScript's backtracking engine on the API's one thread: a pattern that
 * backtracks exponentially on some line would stall every request. Compare exclusions and searches refuse
 * such patterns with the same check.
 */
const repeats = (p: string, at: number) => p[at] === "*" || p[at] === "+" || (p[at] === "{" && /^\{\d+(,\d*)?\}/.test(p.slice(at)));

/**
 * Why a pattern could take exponential time on some line, or undefined. A heuristic, as any such check is:
 * it refuses a repeated group that itself repeats or holds alternatives (`(a+)+`, `(\w|\d)*`) and
 * backreferences, the shapes behind catastrophic backtracking, and lets everything else through.
 */
export function catastrophicShape(p: string): string | undefined {
  const groups: { repeats: boolean; alternates: boolean }[] = [{ repeats: false, alternates: false }];
  for (let i = 0; i < p.length; i++) {
    const ch = p[i];
    const top = groups[groups.length - 1]!;
    if (ch === "\\") {
      if (/[1-9k]/.test(p[i + 1] ?? "")) return "backreferences are not allowed";
      i++;
    } else if (ch === "[") {
      i++;
      if (p[i] === "^") i++;
      if (p[i] === "]") i++;
      while (i < p.length && p[i] !== "]") i += p[i] === "\\" ? 2 : 1;
    } else if (ch === "(") {
      groups.push({ repeats: false, alternates: false });
    } else if (ch === ")" && groups.length > 1) {
      const group = groups.pop()!;
      const repeated = repeats(p, i + 1);
      if (repeated && group.repeats) return "a repeated group may not contain a repetition (e.g. (a+)+): it can take exponential time";
      if (repeated && group.alternates) return "a repeated group may not contain alternatives (e.g. (a|b)*): use a character class such as [ab]*";
      groups[groups.length - 1]!.repeats ||= group.repeats || repeated;
    } else if (ch === "|") {
      top.alternates = true;
    } else if (repeats(p, i)) {
      top.repeats = true;
    }
  }
  return undefined;
}


/**
 * The two forms Junos and PAN-OS print a configuration in, one made from the other, so a configuration kept in
 * one form also checks what netkeep stores from the other: `set a b c value` lines, and the hierarchical form
 * (`a {` ... `b c value;` ... `}`, lists as `name [ x y ];`). A statement's words are the same in both, only
 * their layout differs; comments and blank lines are left out.
 */

/** A line's words, a quoted string being one word. */
export function words(line: string): string[] {
  return line.match(/"(?:[^"\\]|\\.)*"|[^\s"]+/g) ?? [];
}

type Node = Map<string, Node>;

/** `set` lines to the hierarchical form; a node with one child shares its line (`community public {`). */
export function setToTree(lines: readonly string[]): string[] {
  const root: Node = new Map();
  for (const line of lines) {
    const w = words(line);
    if (w[0] !== "set" || w.length < 2) continue;
    let node = root;
    for (const word of w.slice(1)) {
      if (!node.has(word)) node.set(word, new Map());
      node = node.get(word)!;
    }
  }
  const out: string[] = [];
  const print = (node: Node, indent: string) => {
    for (const [name, children] of node) {
      let head = name;
      let rest = children;
      // a chain of single children: one line, as Junos prints `community public {` and `host-name r1;`
      while (rest.size === 1 && [...rest.values()][0]!.size > 0) {
        const [next, grand] = [...rest][0]!;
        head += ` ${next}`;
        rest = grand;
      }
      if (rest.size === 0) out.push(`${indent}${head};`);
      else if ([...rest.values()].every((c) => c.size === 0)) {
        out.push(
          rest.size === 1
            ? `${indent}${head} ${[...rest.keys()][0]};`
            : `${indent}${head} [ ${[...rest.keys()].join(" ")} ];`,
        );
      } else {
        out.push(`${indent}${head} {`);
        print(rest, `${indent}    `);
        out.push(`${indent}}`);
      }
    }
  };
  print(root, "");
  return out;
}

/** The hierarchical form to `set` lines: each leaf (`name value;`, `name [ a b ];`, `flag;`) under its blocks' words. */
export function treeToSet(lines: readonly string[]): string[] {
  const path: string[][] = [];
  const out: string[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    if (line === "}" || line === "};") {
      path.pop();
      continue;
    }
    if (line.endsWith("{")) {
      path.push(words(line.slice(0, -1)));
      continue;
    }
    const leaf = words(line.replace(/;$/, ""));
    if (leaf.length) out.push(["set", ...path.flat(), ...leaf].join(" "));
  }
  return out;
}

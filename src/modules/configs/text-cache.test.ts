import { describe, expect, it } from "vitest";
import { TextCache } from "./text-cache.ts";

describe("TextCache", () => {
  it("keeps values within its budget, dropping the least recently used first", () => {
    const cache = new TextCache<string>(10);
    cache.set("a", "aaaa", 4);
    cache.set("b", "bbbb", 4);
    expect(cache.get("a")).toBe("aaaa"); // a is now the most recently used
    cache.set("c", "cccc", 4); // 12 > 10: b goes
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe("aaaa");
    expect(cache.get("c")).toBe("cccc");
    expect(cache.size).toBe(8);
  });

  it("replaces a key's value and its charge", () => {
    const cache = new TextCache<string>(10);
    cache.set("a", "aaaa", 4);
    cache.set("a", "aaaaaaaa", 8);
    expect(cache.size).toBe(8);
    expect(cache.get("a")).toBe("aaaaaaaa");
  });

  it("does not keep a value larger than the whole budget, nor lose others for it", () => {
    const cache = new TextCache<string>(10);
    cache.set("a", "aaaa", 4);
    cache.set("huge", "x".repeat(11), 11);
    expect(cache.get("huge")).toBeUndefined();
    expect(cache.get("a")).toBe("aaaa");
  });

  it("forgets everything on clear", () => {
    const cache = new TextCache<string>(10);
    cache.set("a", "aaaa", 4);
    cache.clear();
    expect(cache.get("a")).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});

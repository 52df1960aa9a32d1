import { describe, expect, it } from "vitest";
import { renderLine, renderTerminal, stripAnsi } from "./terminal.ts";

describe("terminal rendering", () => {
  it("removes colour, cursor and title escapes", () => {
    expect(stripAnsi("\x1b[1;32mOK\x1b[0m \x1b[2K\x1b[1Gdone\x1b]0;title\x07")).toBe("OK done");
    expect(renderTerminal("\x1b[?25lline\x1b[?25h\r\n")).toBe("line\n");
  });

  it("applies carriage returns and backspaces like a terminal", () => {
    expect(renderLine(" --More-- \r          \rinterface Gi0/2")).toBe("interface Gi0/2");
    expect(renderLine("--More--\b\b\b\b\b\b\b\b        \b\b\b\b\b\b\b\bhostname r1")).toBe("hostname r1");
    expect(renderLine("abc\bX")).toBe("abX");
    expect(renderLine("\rLAB-ASA#")).toBe("LAB-ASA#");
  });

  it("normalises CRLF and drops trailing spaces but keeps indentation", () => {
    expect(renderTerminal("interface Gi0/1\r\n description up  \r\n!\r\n")).toBe(
      "interface Gi0/1\n description up\n!\n",
    );
  });

  it("moves the cursor back n columns on ESC [ n D, as Huawei's pager erases its prompt", () => {
    const more = "  ---- More ----";
    const erase = `\x1b[16D${" ".repeat(16)}\x1b[16D`;
    expect(
      renderTerminal(`sysname core-1\r\n${more}${erase}interface GE0/0/1\r\n${more}${erase} undo shutdown\r\n`),
    ).toBe("sysname core-1\ninterface GE0/0/1\n undo shutdown\n");
    // No count is one column; the cursor stops at the line's start.
    expect(renderTerminal("abc\x1b[DX\n")).toBe("abX\n");
    expect(renderTerminal("ab\x1b[99Dxy\n")).toBe("xy\n");
  });
});

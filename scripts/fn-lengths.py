#!/usr/bin/env python3
"""The longest functions of each crate, in lines (signature to closing brace), from rustfmt'ed
source: a `fn` item ends at the first `}` line indented as the item itself.

    scripts/fn-lengths.py            # the longest function of each crate's src/
    scripts/fn-lengths.py --top 10 crates/schedlab-engine/src
"""
import re
import sys
from pathlib import Path

FN = re.compile(r'^(\s*)(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"[^"]*"\s+)?fn\s+(\w+)')


def functions(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        indent = m.group(1)
        # A declaration without a body (trait method): `;` before any `{`.
        j = i
        while j < len(lines) and "{" not in lines[j] and not lines[j].rstrip().endswith(";"):
            j += 1
        if j >= len(lines) or "{" not in lines[j]:
            continue
        if lines[j].rstrip().endswith("}") and lines[j].count("{") == lines[j].count("}"):
            yield (1 + j - i, m.group(8), f"{path}:{i + 1}")
            continue
        for k in range(j + 1, len(lines)):
            if lines[k].startswith(indent + "}") and not lines[k].startswith(indent + " "):
                yield (k - i + 1, m.group(8), f"{path}:{i + 1}")
                break


def scan(root):
    out = []
    for p in sorted(Path(root).rglob("*.rs")):
        out.extend(functions(p))
    return sorted(out, reverse=True)


def main():
    args = sys.argv[1:]
    top = 1
    if args[:1] == ["--top"]:
        top, args = int(args[1]), args[2:]
    roots = args or sorted(str(p) for p in Path("crates").glob("*/src"))
    for r in roots:
        for n, name, where in scan(r)[:top]:
            print(f"{n:5d}  {name:32s} {where}")


if __name__ == "__main__":
    main()

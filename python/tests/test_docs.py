"""docs/python.md's sample table is what its compare example prints."""

import re

import schedlab
from conftest import REPO


def test_sample_table_is_printed():
    doc = (REPO / "docs/python.md").read_text()
    code = re.search(r"## Compare\n\n```python\n(.*?)```", doc, re.S).group(1)
    table = re.search(r"```text\n(.*?)```", doc[doc.index("## Compare"):], re.S).group(1)
    printed = []
    env = {"schedlab": schedlab, "print": lambda x: printed.append(str(x))}
    exec(code, env)
    assert printed[-1].strip("\n") == table.strip("\n")

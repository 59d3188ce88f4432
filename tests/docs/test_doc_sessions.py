"""The docs' session collector itself (doc_sessions.py), on small made-up markdown: what it reads as commands and
markers, what it counts as the same output, and how ``--update-docs`` rewrites a block."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_sessions import Shell, blocks, matches, normal, refreshed, rewrite

DOC = """# t

<!-- docs: not run (a deploy) -->
```console
$ pulumi up
```

<!-- docs: exit 2 -->
```console
$ echo bad; exit 2
bad
```

<!-- docs: trains -->
```console
$ echo return 38.4
return 38.4
```

```console
$ mkdir -p sub && cd sub
$ echo one; echo two
one
two

$ pwd
/home/you/sub
```
"""


def test_blocks_commands_and_markers_are_read(tmp_path: Path) -> None:
    (tmp_path / "doc.md").write_text(DOC)
    found = blocks(tmp_path / "doc.md")
    assert [(b.run, b.exit_code, b.trains) for b in found] == [
        (False, 0, False), (True, 2, False), (True, 0, True), (True, 0, False)
    ]  # fmt: skip
    assert [(c.text, c.printed) for c in found[3].commands] == [
        ("mkdir -p sub && cd sub", []),
        ("echo one; echo two", ["one", "two"]),
        ("pwd", ["/home/you/sub"]),
    ]


def test_a_shell_keeps_its_folder_and_shows_it_as_the_readers(tmp_path: Path) -> None:
    shell = Shell.fresh(tmp_path)
    assert shell.run("mkdir -p sub && cd sub") == (0, [])
    assert shell.run("pwd; exit 3") == (3, ["/home/you/sub"])


def test_structure_is_compared_not_timings_dates_ids_or_widths() -> None:
    assert normal("stepped it in 9.6 s, 2026-11-21, bucket-fb2558c6, a    b") == (
        "stepped it in <time>, <date>, bucket-<id>, a  b"
    )
    assert matches(["added 28 file(s)", "...", "end"], ["added 28 file(s)", "x", "y", "end"])
    assert not matches(["added 28 file(s)"], ["added 31 file(s)"])
    assert not matches(["a  b"], ["a b"])  # a column gap is not a space
    assert not matches(["a"], ["a", "b"])
    assert normal("elapsed 0:00:17") == "elapsed <time>"


def test_a_training_block_compares_words_and_columns_not_numbers() -> None:
    assert normal("3,000 timesteps, 35 episodes  return 49.1", trains=True) == "<n> timesteps, <n> episodes  return <n>"
    assert matches(
        ["✓ cp1 completed: 3,000 timesteps, 35 episodes"], ["✓ cp1 completed: 3,000 timesteps, 41 episodes"], True
    )
    assert not matches(["✓ cp1 completed: 3,000 timesteps"], ["✗ cp1 failed: 3,000 timesteps"], True)
    assert not matches(["return 38.4"], ["return 41.0"])  # outside a training block a number is compared
    best, other = "*  learning_rate=0.003   2/2    34.2", "   learning_rate=0.0003  2/2    26.8"
    assert matches([best, other], [other.replace("0003", "003"), "*" + other[1:]], True)  # the best is an outcome
    assert not matches([best], ["*  learning_rate=0.003   2/2"], True)
    assert refreshed(["return 38.4", "tail"], ["return 41.0", "tail"], trains=True) == ["return 38.4", "tail"]


def test_update_keeps_what_matches_and_what_an_ellipsis_hides(tmp_path: Path) -> None:
    assert refreshed(["head 28", "...", "tail"], ["head 31", "x", "y", "tail"]) == ["head 31", "...", "tail"]
    (tmp_path / "doc.md").write_text(DOC)
    block = blocks(tmp_path / "doc.md")[3]
    rewrite([(block, [[], ["one", "three"], ["/home/you/sub"]])])
    assert "$ echo one; echo two\none\nthree\n\n$ pwd\n/home/you/sub\n```\n" in (tmp_path / "doc.md").read_text()
    assert [c.printed for c in blocks(tmp_path / "doc.md")[3].commands] == [[], ["one", "three"], ["/home/you/sub"]]


def test_update_rewrites_every_block_of_a_file_whose_outputs_change_length(tmp_path: Path) -> None:
    # Offsets are read once, before any rewrite: the first block's longer output must not shift where the later
    # blocks are cut, in whatever order the blocks are handed over.
    doc = tmp_path / "doc.md"
    doc.write_text(DOC)
    exit_2, trains, session = blocks(doc)[1:]
    rewrite(
        [
            (exit_2, [["bad", "worse", "worst of all"]]),
            (trains, [["return 41.0"]]),
            (session, [[], ["one"], ["/home/you/sub"]]),
        ]
    )
    expected = DOC.replace("bad\n```", "bad\nworse\nworst of all\n```").replace("4\nreturn 38.4\n", "4\nreturn 41.0\n")
    # (a rewritten block separates its commands by one blank line, as the docs write them)
    assert doc.read_text() == expected.replace("one\ntwo\n", "one\n").replace("cd sub\n$", "cd sub\n\n$")
    assert [[c.printed for c in b.commands] for b in blocks(doc)[1:]] == [
        [["bad", "worse", "worst of all"]], [["return 41.0"]], [[], ["one"], ["/home/you/sub"]]
    ]  # fmt: skip


def test_update_refuses_a_file_changed_since_its_blocks_were_read(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(DOC)
    stale = blocks(doc)[3]
    doc.write_text("# a new heading\n" + DOC)
    with pytest.raises(ValueError, match="changed since its blocks were read"):
        rewrite([(stale, [[], ["one"], ["/home/you/sub"]])])
    assert doc.read_text() == "# a new heading\n" + DOC

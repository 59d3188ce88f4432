"""The trainer's build context is deterministic and names the image: what changes the digest and what does not."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from infra.image_context import build_context, excluded, parse_ignore, source_root
from trainer.kernel.errors import TfcliError

IGNORE = "*\n!pyproject.toml\n!README.md\n!tfcli/\n!trainer/\n!infra/\n**/__pycache__\n**/*.pyc\n"


def make_source(root: Path) -> Path:
    (root / "trainer").mkdir(parents=True)
    (root / "tfcli").mkdir()
    (root / "docs").mkdir()
    (root / ".dockerignore").write_text(IGNORE)
    (root / "pyproject.toml").write_text('[project]\nname = "tfcli"\ndependencies = ["numpy==1.23.5"]\n')
    (root / "README.md").write_text("readme\n")
    (root / "trainer" / "Dockerfile").write_text("FROM debian:bookworm-slim\n")
    (root / "trainer" / "run.py").write_text("print('train')\n")
    (root / "tfcli" / "__init__.py").write_text("")
    (root / "docs" / "design.md").write_text("design\n")
    return root


def test_the_docs_examples_of_exceptions_and_parents() -> None:
    rules = parse_ignore("*.md\n!README*.md\nREADME-secret.md\n")
    assert excluded(rules, "notes.md") and excluded(rules, "README-secret.md")
    assert not excluded(rules, "README.md")
    rules = parse_ignore("*.md\nREADME-secret.md\n!README*.md\n")  # the last matching line decides
    assert not excluded(rules, "README-secret.md")
    rules = parse_ignore("*/temp*\ntemp?\n/node_modules/\n**/*.pyc\n")
    assert excluded(rules, "somedir/temporary.txt") and not excluded(rules, "somedir/sub/temporary.txt")
    assert excluded(rules, "tempa") and not excluded(rules, "tempab")
    assert excluded(rules, "node_modules/a/b.js")  # a pattern matching a parent folder excludes what is inside
    assert excluded(rules, "x.pyc") and excluded(rules, "a/b/c.pyc")


@pytest.mark.parametrize(
    ("line", "problem"),
    [("[abc", "unterminated character class"), ("[]x]", "empty character class"), ("a\\", "trailing backslash")],
)
def test_a_line_docker_refuses_is_named(line: str, problem: str) -> None:
    with pytest.raises(TfcliError, match=rf"\.dockerignore: line 2: {problem}"):
        parse_ignore(f"ok\n{line}\n")


def test_the_context_is_the_same_bytes_whatever_the_times_and_order(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    first = build_context(root)
    os.utime(root / "trainer" / "run.py", (1, 1))
    assert build_context(root) == first
    with tarfile.open(fileobj=io.BytesIO(first.archive), mode="r:gz") as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == sorted(m.name for m in members) == list(first.files)
    assert {(m.mtime, m.uid, m.gid, m.uname) for m in members} == {(0, 0, 0, "")}
    assert first.files == ("README.md", "pyproject.toml", "tfcli/__init__.py", "trainer/Dockerfile", "trainer/run.py")


def test_unrelated_files_do_not_change_the_digest(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    before = build_context(root).digest
    (root / "docs" / "design.md").write_text("changed\n")
    (root / "experiments").mkdir()
    (root / "experiments" / "run.json").write_text("{}")
    (root / "trainer" / "__pycache__").mkdir()
    (root / "trainer" / "__pycache__" / "run.cpython-311.pyc").write_bytes(b"\0")
    assert build_context(root).digest == before


@pytest.mark.parametrize(
    ("path", "text"),
    [("trainer/run.py", "print('other')\n"), ("pyproject.toml", "[project]\nname = 'x'\n"),
     ("trainer/Dockerfile", "FROM debian:trixie-slim\n")],
)  # fmt: skip
def test_the_trainer_its_pins_and_the_dockerfile_change_the_digest(tmp_path: Path, path: str, text: str) -> None:
    root = make_source(tmp_path / "src")
    before = build_context(root).digest
    (root / path).write_text(text)
    assert build_context(root).digest != before


def test_an_executable_bit_is_part_of_the_content(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    before = build_context(root).digest
    (root / "trainer" / "run.py").chmod(0o755)
    assert build_context(root).digest != before


def test_a_source_without_its_dockerfile_names_what_is_missing(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    (root / "trainer" / "Dockerfile").unlink()
    with pytest.raises(TfcliError, match="trainer/Dockerfile missing"):
        build_context(root)


def test_this_checkout_sends_what_the_dockerfile_copies_and_nothing_else() -> None:
    """The real .dockerignore on this checkout as it is (its .venv, caches and bytecode included): pyproject.toml,
    README.md and the three packages; docs and tests stay out."""
    checkout = next(p for p in Path(__file__).resolve().parents if (p / ".dockerignore").is_file())
    files = build_context(checkout).files
    assert {f.split("/")[0] for f in files} == {"README.md", "pyproject.toml", "tfcli", "trainer", "infra"}
    assert "trainer/Dockerfile" in files and not any("__pycache__" in f for f in files)


def test_the_source_root_is_the_folder_above_infra() -> None:
    assert (source_root() / "infra" / "image_context.py").is_file()


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("a?c", "abc", True), ("a?c", "a/c", False), ("a?c", "ac", False),
        ("a*", "abc/d", True), ("*", "a/b", True), ("a*c", "ab/c", False),  # a parent matches: "*" matches "a"
        ("[abc]x", "bx", True), ("[abc]x", "dx", False), ("[a-c]x", "cx", True),
        ("[^abc]x", "dx", True), ("[^abc]x", "ax", False),
        ("a\\*b", "a*b", True), ("a\\*b", "axb", False), ("a.b", "axb", False), ("a+b", "a+b", True),
        ("**/x", "x", True), ("**/x", "a/b/x", True), ("**/x", "ax", False),
        ("a/**", "a/b/c", True), ("a/**", "b/c", False), ("a**", "a/b", True),
        ("/lead", "lead", True), ("./dot/", "dot/f", True), ("a/../b", "b", True), ("Xray", "Xray", True),
        ("a/**/b", "a/x/y/b", True), ("a/**/b", "a/b", True), ("a**c", "ab/xc", True), ("a**c", "ab/xd", False),
        ("[a]x[b]", "axb", True), ("[a]x[b]", "axc", False), ("xa\\*", "xa*", True), ("xa\\*", "xab", False),
    ],
)  # fmt: skip
def test_patterns_follow_gos_filepath_match_plus_double_star(pattern: str, path: str, matches: bool) -> None:
    assert excluded(parse_ignore(pattern), path) is matches


def test_comments_blank_lines_and_spaced_exceptions() -> None:
    rules = parse_ignore("# all but one\n\n  *  \n ! keep.txt \n#keep2\n")
    assert len(rules) == 2 and rules[1].exception and not rules[0].exception
    assert excluded(rules, "other") and not excluded(rules, "keep.txt")
    assert not excluded(parse_ignore(""), "anything")


@pytest.mark.parametrize("line", ["!", "/", "."])
def test_a_line_that_is_no_pattern_is_refused(line: str) -> None:
    with pytest.raises(TfcliError, match=r"\.dockerignore: line 1: .* is not a pattern"):
        parse_ignore(f"{line}\n")


def test_the_archive_keeps_modes_and_reads_back_the_same_files(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    (root / "trainer" / "run.py").chmod(0o700)
    (root / "README.md").chmod(0o645)  # any execute bit counts, the others' too
    context = build_context(root)
    with tarfile.open(fileobj=io.BytesIO(context.archive), mode="r:gz") as tar:
        modes = {m.name: m.mode for m in tar.getmembers()}
        assert tar.extractfile("trainer/run.py").read() == b"print('train')\n"  # type: ignore[union-attr]
        assert all(m.isfile() and m.gname == "" for m in tar.getmembers())
    assert modes["trainer/run.py"] == 0o755 and modes["README.md"] == 0o755 and modes["pyproject.toml"] == 0o644
    assert context.archive[:2] == b"\x1f\x8b" and context.archive[4:8] == b"\0\0\0\0"  # gzip, mtime 0
    assert context.short == context.digest[:16] and len(context.digest) == 64


def test_an_excluded_folder_is_skipped_whole_as_dockers_walk_skips_it(tmp_path: Path) -> None:
    """moby's ``pkg/archive.TarWithOptions``: an excluded folder is not walked unless an exception's pattern starts
    with its path, so ``!**/keep.txt`` brings nothing back from ``docs/`` while ``!docs/keep.txt`` does; a
    checkout's ``.venv`` (hundreds of thousands of files) is never read."""
    root = make_source(tmp_path)
    (root / "docs" / "keep.txt").write_text("kept?\n")
    (root / "trainer" / "keep.txt").write_text("kept\n")
    (root / ".dockerignore").write_text(IGNORE + "!**/keep.txt\n")
    assert [f for f in build_context(root).files if f.endswith("keep.txt")] == ["trainer/keep.txt"]
    (root / ".dockerignore").write_text(IGNORE + "!docs/keep.txt\n")
    assert "docs/keep.txt" in build_context(root).files and "docs/design.md" not in build_context(root).files


def test_links_are_left_out(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    (root / "trainer" / "link.py").symlink_to(root / "trainer" / "run.py")
    assert "trainer/link.py" not in build_context(root).files


def test_the_missing_parts_are_all_named(tmp_path: Path) -> None:
    root = make_source(tmp_path / "src")
    (root / ".dockerignore").unlink()
    (root / "pyproject.toml").unlink()
    with pytest.raises(TfcliError, match=r"incomplete: pyproject.toml, \.dockerignore missing in .*src") as caught:
        build_context(root)
    assert caught.value.hint == (
        "run tfcli from a checkout of its source, or set `image:` in tfcli.yaml to a ready trainer image"
    )


def test_the_command_prints_the_short_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from infra.image_context import main

    root = make_source(tmp_path / "src")
    assert main([str(root)]) == 0
    assert capsys.readouterr().out == build_context(root).short + "\n"
    monkeypatch.setattr("infra.image_context.source_root", lambda: root)  # no argument: the source root's
    assert main([]) == 0
    assert capsys.readouterr().out == build_context(root).short + "\n"


def test_a_folder_without_the_source_has_none(tmp_path: Path) -> None:
    from infra.image_context import has_source

    root = make_source(tmp_path / "src")
    assert has_source(root)
    (root / "trainer" / "Dockerfile").unlink()
    assert not has_source(root)

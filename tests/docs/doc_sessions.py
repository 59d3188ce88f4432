"""The docs' console sessions: read from the markdown, run in a fresh project, compared in structure, rewritten.

A ```` ```console ```` block is a session a user can type: ``$ COMMAND`` lines, each followed by what it prints.
An HTML comment on the line before the block says how to run it (the only markers there are):

- ``<!-- docs: not run (why) -->``: never run (a GKE deploy, ``pulumi up``); keep these few;
- ``<!-- docs: exit N -->``: every command of the block ends with exit code N (default 0);
- ``<!-- docs: trains -->``: the block trains, so its numbers (returns, episodes, rates, pids) and which row a table
  marks best (``*``) are not compared: TensorFlow's floating point differs between machines and a run's episodes
  with it; its words, lines and columns are.

The blocks of one file run in the order printed, in one temporary folder, as one user's session: a ``cd`` in a
command carries over to the next (each command runs in ``bash -c``, stdout and stderr together, as a terminal shows
them). A ``...`` line in a printed output stands for any lines (the docs leave out what does not help the reader).

*In structure* means what the reader relies on (lines, columns, counts, messages, prices) and not what differs
from one machine or run to the next: durations (``9.6 s``, ``41 ms``), dates, random ids (hex), absolute paths (the
temporary folder reads as ``/home/you``) and column widths (a run of two or more spaces is one column gap).

Why a collector of our own rather than Sybil or pytest-console-scripts: the docs are shell sessions, not Python
doctests (Sybil's parsers for them are Python- and doctest-shaped, so it would need a parser of this size anyway, and
a dependency), and pytest-console-scripts runs one entry point per call in-process or as a subprocess with no notion
of a printed transcript to compare against or to rewrite. What is needed is small: find the blocks, run them, compare
after normalising, and rewrite the blocks' outputs from what the commands print now (:func:`rewrite`).
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOWN_HOME = "/home/you"
ELLIPSIS = "..."
_FENCE = re.compile(r"^```console\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_MARKER = re.compile(r"<!--\s*docs:\s*(not run|exit\s+\d+|trains)\b[^>]*-->\s*\n$")


@dataclass
class Command:
    """One ``$ COMMAND`` line and the lines printed under it in the doc."""

    text: str
    printed: list[str] = field(default_factory=list)


@dataclass
class Block:
    """One console block: where it is in its file (to rewrite it) and how it is run."""

    path: Path
    start: int  # offset of the block's body in the file, as read
    end: int
    body: str  # the body as read: a rewrite checks the file still holds it there
    commands: list[Command]
    run: bool = True
    exit_code: int = 0
    trains: bool = False  # its numbers are not compared

    @property
    def where(self) -> str:
        line = self.path.read_text()[: self.start].count("\n") + 1
        shown = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{shown}:{line}"


def blocks(path: Path) -> list[Block]:
    """Every console block of a markdown file, in order, with its marker read."""
    text = path.read_text()
    found = []
    for match in _FENCE.finditer(text):
        block = Block(path, match.start(1), match.end(1), match.group(1), _commands(match.group(1)))
        before = text[: match.start()].rsplit("\n", 2)
        marker = _MARKER.search("\n".join(before[-2:]) if len(before) > 1 else "")
        if marker:
            kind = marker.group(1)
            block.run = kind != "not run"
            if kind.startswith("exit"):
                block.exit_code = int(kind.split()[1])
            block.trains = kind == "trains"
        found.append(block)
    return found


def _commands(body: str) -> list[Command]:
    commands: list[Command] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            commands.append(Command(line[2:]))
        elif commands and (line or commands[-1].printed):
            commands[-1].printed.append(line)
    for command in commands:  # the blank line that separates one command from the next is not output
        while command.printed and not command.printed[-1]:
            command.printed.pop()
    return commands


@dataclass
class Shell:
    """One user's terminal in a temporary folder: the working directory carries over from command to command."""

    home: Path
    cwd: Path
    env: dict[str, str]

    @classmethod
    def fresh(cls, home: Path) -> Shell:
        """``tfcli`` on PATH as the console script a user's install gives (this checkout's environment), no
        colours, a wide terminal so no line wraps, no debug tracebacks, and unbuffered output so stdout and stderr
        interleave as on a terminal."""
        env = {key: value for key, value in os.environ.items() if not key.startswith(("TFCLI_", "PULUMI_"))}
        env.update(
            PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env['PATH']}", HOME=str(home), COLUMNS="200",
            NO_COLOR="1", TERM="dumb", PYTHONUNBUFFERED="1",
        )  # fmt: skip
        return cls(home, home, env)

    def run(self, command: str, timeout: float = 300) -> tuple[int, list[str]]:
        """Run one command as typed; its exit code and the lines it printed (the folder read as ``/home/you``)."""
        marker = self.home / ".cwd"
        script = f'{command}\nrc=$?\npwd > "{marker}"\nexit $rc'
        done = subprocess.run(
            ["bash", "-c", script], cwd=self.cwd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=timeout, check=False,
        )  # fmt: skip
        if marker.is_file():
            self.cwd = Path(marker.read_text().strip())
        printed = done.stdout.replace(str(self.home), SHOWN_HOME).splitlines()
        while printed and not printed[-1]:
            printed.pop()
        return done.returncode, printed


_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|min|h)\b(?!/)|\b\d+:\d\d:\d\d\b")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?\b")
_RANDOM_ID = re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b")
_GAP = re.compile(r" {2,}")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_BEST = re.compile(r"^\*(?= )")  # list -s / compare -s mark the best row


def normal(line: str, trains: bool = False) -> str:
    """A printed line as compared: durations, dates, random ids and column widths removed, and every number and
    best-row mark where the block ``trains`` (the module's docstring says why)."""
    line = _RANDOM_ID.sub("<id>", _DATE.sub("<date>", _DURATION.sub("<time>", line)))
    if trains:
        line = _BEST.sub(" ", _NUMBER.sub("<n>", line))
    return _GAP.sub("  ", line).rstrip()


def matches(printed: list[str], actual: list[str], trains: bool = False) -> bool:
    """Whether the doc's lines say what the command printed, ``...`` standing for any lines."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line == ELLIPSIS else re.escape(normal(line, trains)) + r"\n" for line in printed
    )
    return re.fullmatch(pattern, "".join(normal(line, trains) + "\n" for line in actual)) is not None


def diff(printed: list[str], actual: list[str], trains: bool = False) -> str:
    """A readable diff of the doc's output against what the command prints now (normalised)."""
    lines = difflib.unified_diff(
        [normal(line, trains) for line in printed], [normal(line, trains) for line in actual],
        "as the doc prints it", "as the command prints it now", lineterm="",
    )  # fmt: skip
    return "\n".join(lines)


def refreshed(printed: list[str], actual: list[str], trains: bool = False) -> list[str]:
    """The doc's output brought up to date with ``actual``: lines that still match stay as the doc writes them,
    changed lines are taken from ``actual``, and what a ``...`` left out stays left out."""
    if matches(printed, actual, trains):
        return printed
    kept: list[str] = []
    matcher = difflib.SequenceMatcher(
        a=[normal(x, trains) for x in printed], b=[normal(x, trains) for x in actual], autojunk=False
    )
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        elided = ELLIPSIS in printed[a0:a1]
        if op == "equal":
            kept += printed[a0:a1]
        elif elided:  # the lines on either side of the ``...`` taken from ``actual``, the middle still left out
            cut = printed[a0:a1].index(ELLIPSIS)
            chunk = actual[b0:b1]
            head = min(cut, len(chunk))
            tail = min(a1 - a0 - cut - 1, len(chunk) - head)
            kept += [*chunk[:head], ELLIPSIS, *chunk[len(chunk) - tail :]]
        elif op != "delete":
            kept += actual[b0:b1]
    return kept


def rewrite(rewrites: list[tuple[Block, list[list[str]]]]) -> None:
    """Write each block's command outputs (``outputs[i]`` for its command ``i``, as :func:`refreshed` made them) back
    into its file, in one write per file.

    A block's offsets are where :func:`blocks` found it, before any rewrite: a new output of another length moves
    every block after it. So each file is rewritten from its last block backwards, where the offsets still hold,
    whatever order the blocks come in; a file changed since it was read is refused rather than cut at old offsets."""
    by_file: dict[Path, list[tuple[Block, list[list[str]]]]] = {}
    for block, outputs in rewrites:
        by_file.setdefault(block.path, []).append((block, outputs))
    for path, found in by_file.items():
        text = path.read_text()
        for block, outputs in sorted(found, key=lambda item: item[0].start, reverse=True):
            if text[block.start : block.end] != block.body:
                raise ValueError(f"{block.where}: the file changed since its blocks were read; read them again")
            text = text[: block.start] + _body(block.commands, outputs) + text[block.end :]
        path.write_text(text)


def _body(commands: list[Command], outputs: list[list[str]]) -> str:
    """A block's text: each ``$ COMMAND`` line, its output, a blank line before the next command."""
    return "".join(
        "\n".join([f"$ {command.text}", *output]) + "\n" + ("\n" if index < len(outputs) - 1 else "")
        for index, (command, output) in enumerate(zip(commands, outputs, strict=True))
    )

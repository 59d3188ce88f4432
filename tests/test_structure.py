"""The structural rules of issue 17, read from the source with ``ast`` (nothing of the project is imported).

``lint-imports`` (pyproject.toml) checks the layers between packages; these rules are finer or not about imports:
no ``_private`` name taken from another module, no import circle between any two modules (import-linter looks at
siblings only), no file over 400 lines, and few string tests of the backend outside the backend modules. Every
import statement counts, those inside functions included: that is where circles hide.

Each checker returns what breaks its rule, one line per finding, so a failure says what to fix. The
``test_checker_*`` tests run each checker on a small tree written to ``tmp_path`` that breaks the rule, so a
checker that stopped seeing anything would fail there instead of passing here.
"""

from __future__ import annotations

import ast
import functools
import itertools
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("tfcli", "infra", "trainer")
OTHER_CODE = ("tests", "bench", "scripts")  # held to the length rule too; the import rules are the packages'
MAX_LINES = 400
MAX_BACKEND_TESTS = 3
BACKEND_NAMES = frozenset({"gke", "local"})
# Where choosing between the backends by name is the point.
BACKEND_MODULES = ("tfcli.local", "tfcli.gke", "tfcli.backends")

BY_PACKAGE = [
    "tfcli",
    "infra",
    "trainer",
]


@dataclass(frozen=True)
class Source:
    name: str  # dotted module name; a package is named by its __init__.py
    path: Path  # relative to the root, for messages
    tree: ast.Module
    lines: int
    is_package: bool


@dataclass(frozen=True)
class Finding:
    packages: frozenset[str]  # the top-level packages the finding is in, to give each package its own test
    text: str


def read_sources(root: Path, packages: tuple[str, ...]) -> dict[str, Source]:
    """Every ``.py`` file under the packages, parsed."""
    sources = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            parts = relative.with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text, filename=str(relative))
            sources[name] = Source(name, relative, tree, len(text.splitlines()), is_package)
    return sources


@functools.cache
def project() -> dict[str, Source]:
    return read_sources(ROOT, PACKAGES)


def is_private(name: str) -> bool:
    """``_name`` is private; a dunder (``__version__``, ``__all__``) is not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _known(sources: dict[str, Source], dotted: str) -> str | None:
    """The project module ``dotted`` names, or the longest project module it starts with; None outside the project."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        if (candidate := ".".join(parts[:end])) in sources:
            return candidate
    return None


def _from_base(source: Source, node: ast.ImportFrom) -> str | None:
    """The absolute module a ``from ... import`` reads from, relative imports resolved."""
    if not node.level:
        return node.module
    package = source.name.split(".") if source.is_package else source.name.split(".")[:-1]
    if node.level - 1 >= len(package):
        return None
    base = ".".join(package[: len(package) - (node.level - 1)])
    return f"{base}.{node.module}" if node.module else base


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    line: int
    in_function: bool


def _imports(source: Source) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement of a module, with whether it sits inside a function."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.append((child, in_function))
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(source.tree, False)
    return found


def import_edges(sources: dict[str, Source]) -> list[Edge]:
    """Module-to-module imports inside the project. ``from pkg import name`` is an import of ``pkg.name`` where that
    is a module (the submodule is what the statement needs), of ``pkg`` otherwise."""
    edges = []
    for source in sources.values():
        for node, in_function in _imports(source):
            targets: list[str | None] = []
            if isinstance(node, ast.Import):
                targets = [_known(sources, alias.name) for alias in node.names]
            elif (base := _from_base(source, node)) is not None:
                for alias in node.names:
                    submodule = f"{base}.{alias.name}"
                    targets.append(submodule if submodule in sources else _known(sources, base))
            for target in targets:
                if target is not None and target != source.name:
                    edges.append(Edge(source.name, target, node.lineno, in_function))
    return edges


def _package_of(name: str) -> frozenset[str]:
    return frozenset({name.split(".")[0]})


def private_imports(sources: dict[str, Source]) -> list[Finding]:
    """``from m import _x``, ``from . import _x``, and ``m._x`` where ``m`` names a project module in this file."""
    findings = []
    for source in sources.values():
        bound: dict[str, str] = {}  # local name -> the project module it names
        for statement, _ in _imports(source):
            if isinstance(statement, ast.Import):
                for alias in statement.names:
                    local = alias.asname or alias.name.split(".")[0]
                    target = alias.name if alias.asname else alias.name.split(".")[0]
                    if target in sources:
                        bound[local] = target
                continue
            base = _from_base(source, statement)
            module = _known(sources, base) if base else None
            if base is None or module is None:
                continue
            for alias in statement.names:
                if f"{base}.{alias.name}" in sources:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
                if is_private(alias.name) and base != source.name:
                    text = f"{source.path}:{statement.lineno}: imports {alias.name} from {base}"
                    findings.append(Finding(_package_of(source.name), text))
        for node in ast.walk(source.tree):
            if not isinstance(node, ast.Attribute):
                continue
            chain = [node.attr]
            value = node.value
            while isinstance(value, ast.Attribute):
                chain.insert(0, value.attr)
                value = value.value
            if not isinstance(value, ast.Name) or value.id not in bound:
                continue
            module, rest = bound[value.id], chain
            while len(rest) > 1 and f"{module}.{rest[0]}" in sources:
                module, rest = f"{module}.{rest[0]}", rest[1:]
            # Only the attribute right after the module: the enclosing chains (``m._x.y``) are not counted again.
            if len(rest) == 1 and is_private(rest[0]) and module != source.name:
                text = f"{source.path}:{node.lineno}: uses {module}.{rest[0]}"
                findings.append(Finding(_package_of(source.name), text))
    return findings


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for successor in graph[todo.pop()] - seen:
            seen.add(successor)
            todo.append(successor)
    return seen


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The sets of modules that all reach each other (strongly connected), each of more than one module. A search
    from every module is plenty for a few hundred modules, and plainer than Tarjan's algorithm."""
    reach = {name: _reachable(graph, name) for name in graph}
    circles = {frozenset({name} | {other for other in reach[name] if name in reach[other]}) for name in graph}
    return sorted(sorted(circle) for circle in circles if len(circle) > 1)


def _shortest_loop(graph: dict[str, set[str]], start: str, members: set[str]) -> list[str]:
    """The shortest way from ``start`` back to itself inside one component (breadth first)."""
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in sorted(graph[node] & members):
            if successor == start:
                path = [node]
                while path[0] != start:
                    path.insert(0, previous[path[0]])
                return [*path, start]
            if successor not in previous:
                previous[successor] = node
                queue.append(successor)
    raise AssertionError(f"{start} is in a component but on no loop")  # pragma: no cover


def import_cycles(sources: dict[str, Source]) -> list[Finding]:
    """Each set of modules that import each other in a circle: its files, and one circle through it line by line."""
    edges = import_edges(sources)
    graph: dict[str, set[str]] = {name: set() for name in sources}
    first: dict[tuple[str, str], Edge] = {}
    for edge in edges:
        graph[edge.importer].add(edge.imported)
        first.setdefault((edge.importer, edge.imported), edge)
    findings = []
    for component in _circles(graph):
        loop = _shortest_loop(graph, component[0], set(component))
        steps = []
        for importer, imported in itertools.pairwise(loop):
            edge = first[(importer, imported)]
            where = " (inside a function)" if edge.in_function else ""
            steps.append(f"    {sources[importer].path}:{edge.line}{where} imports {imported}")
        files = ", ".join(str(sources[name].path) for name in component)
        text = f"a circle of {len(component)} modules: {files}\n  for example:\n" + "\n".join(steps)
        findings.append(Finding(frozenset(name.split(".")[0] for name in component), text))
    return findings


def oversized_files(sources: dict[str, Source], limit: int = MAX_LINES) -> list[Finding]:
    return [
        Finding(_package_of(source.name), f"{source.path}: {source.lines} lines (at most {limit})")
        for source in sources.values()
        if source.lines > limit
    ]


def _names_backend(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in BACKEND_NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_backend(element) for element in node.elts)
    return False


def backend_string_tests(sources: dict[str, Source]) -> list[Finding]:
    """Comparisons with "gke" or "local" (``==``, ``!=``, ``in``, ``not in``, ``case "gke":``) outside the backend
    modules: each is a place that branches on the backend by name instead of asking the backend."""
    found_at: list[tuple[Path, int, int, str, str]] = []
    for source in sources.values():
        if any(source.name == module or source.name.startswith(f"{module}.") for module in BACKEND_MODULES):
            continue
        for node in ast.walk(source.tree):
            if isinstance(node, ast.Compare):
                equality = all(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops)
                found = equality and any(_names_backend(side) for side in [node.left, *node.comparators])
            elif isinstance(node, ast.MatchValue):
                found = _names_backend(node.value)
            else:
                continue
            if found:
                found_at.append((source.path, node.lineno, node.col_offset, ast.unparse(node), source.name))
    return [Finding(_package_of(name), f"{path}:{line}: {text}") for path, line, _, text, name in sorted(found_at)]


def _report(rule: str, findings: list[Finding]) -> None:
    if findings:
        lines = "\n".join(finding.text for finding in findings)
        pytest.fail(f"{rule}: {len(findings)} found\n{lines}", pytrace=False)


def _in(package: str, findings: list[Finding]) -> list[Finding]:
    return [finding for finding in findings if package in finding.packages]


@pytest.mark.parametrize("package", BY_PACKAGE)
def test_no_private_name_is_imported_from_another_module(package: str) -> None:
    _report("private names imported from another module", _in(package, private_imports(project())))


@pytest.mark.parametrize("package", BY_PACKAGE)
def test_no_import_circle(package: str) -> None:
    _report("import circles", _in(package, import_cycles(project())))


@pytest.mark.parametrize("package", BY_PACKAGE)
def test_no_file_over_400_lines(package: str) -> None:
    _report(f"files over {MAX_LINES} lines", _in(package, oversized_files(project())))


def test_no_test_benchmark_or_script_over_400_lines() -> None:
    """The tests' stand-ins and kits, the benchmarks and the scripts are read as often as the packages."""
    _report(f"files over {MAX_LINES} lines", oversized_files(read_sources(ROOT, OTHER_CODE)))


def test_few_string_tests_of_the_backend_outside_the_backend_modules() -> None:
    findings = backend_string_tests(project())
    if len(findings) > MAX_BACKEND_TESTS:
        _report(f"string tests of the backend outside {', '.join(BACKEND_MODULES)} (at most 3)", findings)


def _tree(root: Path, files: dict[str, str]) -> dict[str, Source]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return read_sources(root, ("pkg",))


def test_checker_finds_private_names_taken_from_other_modules(tmp_path: Path) -> None:
    sources = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "__version__ = '1'\n_shared = 1\n",
            "pkg/a.py": "def _helper(): ...\ndef _own(): ...\nx = _own()\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/b.py": "from pkg.a import _helper as helper\nfrom pkg import __version__\n",
            "pkg/sub/c.py": "def f():\n    from .. import _shared\n",
            "pkg/d.py": "import pkg.a\n\npkg.a._helper()\n",
            "pkg/e.py": "from pkg import a\nfrom . import a as alias\n\na._helper()\nalias._helper()\nself._x = 1\n",
        },
    )
    found = {finding.text for finding in private_imports(sources)}
    assert found == {
        "pkg/sub/b.py:1: imports _helper from pkg.a",
        "pkg/sub/c.py:2: imports _shared from pkg",
        "pkg/d.py:3: uses pkg.a._helper",
        "pkg/e.py:4: uses pkg.a._helper",
        "pkg/e.py:5: uses pkg.a._helper",
    }


def test_checker_finds_a_circle_through_a_function_level_import(tmp_path: Path) -> None:
    sources = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "import os\n\ndef later():\n    from . import a\n",
            "pkg/c.py": "from pkg.a import b\n",  # imports pkg.a, which nothing imports back: no circle
        },
    )
    [finding] = import_cycles(sources)
    assert finding.packages == {"pkg"}
    assert finding.text == (
        "a circle of 2 modules: pkg/a.py, pkg/b.py\n"
        "  for example:\n"
        "    pkg/a.py:1 imports pkg.b\n"
        "    pkg/b.py:4 (inside a function) imports pkg.a"
    )


def test_checker_finds_a_file_over_400_lines(tmp_path: Path) -> None:
    sources = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/long.py": "x = 1\n" * 401, "pkg/ok.py": "x = 1\n" * 400})
    assert [finding.text for finding in oversized_files(sources)] == ["pkg/long.py: 401 lines (at most 400)"]


def test_checker_counts_string_tests_of_the_backend(tmp_path: Path) -> None:
    tests = 'if b == "gke" or "local" != b or b in ("gke", "x") or run.get("backend") not in ["local"]: ...\n'
    sources = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/cli.py": tests + 'match b:\n    case "local": ...\nif b == "gpu" or b < "gke": ...\n',
        },
    )
    assert [finding.text for finding in backend_string_tests(sources)] == [
        "pkg/cli.py:1: b == 'gke'",
        "pkg/cli.py:1: 'local' != b",
        "pkg/cli.py:1: b in ('gke', 'x')",
        "pkg/cli.py:1: run.get('backend') not in ['local']",
        "pkg/cli.py:3: 'local'",
    ]


def test_backend_modules_may_test_the_backend_by_name(tmp_path: Path) -> None:
    for name in ("tfcli/__init__.py", "tfcli/gke/__init__.py", "tfcli/local/run.py", "tfcli/backends/__init__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text('x = b == "gke" or b == "local"\n')
    found = [finding.text for finding in backend_string_tests(read_sources(tmp_path, ("tfcli",)))]
    assert found == ["tfcli/__init__.py:1: b == 'gke'", "tfcli/__init__.py:1: b == 'local'"]

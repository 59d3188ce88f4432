"""Shared fixtures: a throw-away tfcli project to run commands in, a GCS emulator over real HTTP and GCS FUSE mounts
of its buckets (tests/gcsfuse.py), as pods mount the results bucket."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import itertools
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from disk_kit import mount_tmpfs, unmount
from order_kit import CostOrder

from trainer.kernel.spec.library import PROJECT_FILE

# pytest rewrites the asserts of every test module it collects (~10 s of CPU in each of the two test processes on
# this 2-core machine: collecting took 17.4 s, and 6.8 s with the rewritten modules kept) and keeps the result as
# bytecode only where bytecode may be written. Where PYTHONDONTWRITEBYTECODE is set (sandboxes, CI machines) it
# rewrote every module again in every run. The test processes write it (into __pycache__/, which git ignores); the
# processes the tests start keep the environment's setting.
sys.dont_write_bytecode = False


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-costs",
        action="store_true",
        help="write each test's seconds into tests/costs.json, which orders the next runs longest first",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Order the tests longest first (tests/order_kit.py), so that the two test processes end together.

    Install libfuse 3 where it is missing, as .ci/run does, so that the README's `uv run pytest` alone sets up what
    the GCS FUSE stand-in (tests/gcsfuse.py) needs on a fresh machine. Only once (not in xdist's workers, which start
    after this and import the stand-in), only as root with apt-get; elsewhere the mounting tests say what is missing."""
    import ctypes.util
    import shutil
    import subprocess

    config.pluginmanager.register(CostOrder(record=config.getoption("--record-costs")), "cost-order")
    if hasattr(config, "workerinput") or ctypes.util.find_library("fuse3"):
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "libfuse3-3"]):
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600, check=False)


SLOW_FIXTURES = frozenset({"fake_pulumi", "release_memory", "spec_file"})
"""Fixtures that only a slow test needs: the fake ``pulumi`` CLI (journeys through real subprocesses), TensorForce
agents built in this process, and a spec file for a real trainer run (tests/trainer)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a slow fixture ``slow``, so that a new journey or training is left out of
    ``pytest -m "not slow"`` without anyone remembering the marker; whole slow modules say ``pytestmark``."""
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def inner_loop_without_tensorflow(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test not marked ``slow`` that imports TensorFlow into the test process fails: the import alone is seconds
    of each test process, and ``pytest -m "not slow"`` (README "Development") imports none. Only where TensorFlow
    was not imported before the test (a slow test earlier in the same process may have)."""
    before = "tensorflow" in sys.modules
    yield
    if not before and "tensorflow" in sys.modules and request.node.get_closest_marker("slow") is None:
        pytest.fail(f"{request.node.nodeid} imports TensorFlow in the test process: mark it slow", pytrace=False)


@pytest.fixture(autouse=True)
def msgpack_left_as_found(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that leaves ``msgpack`` patched by msgpack_numpy fails itself. TensorForce's import patches it
    process-wide, and ``trainer.compat.apply()`` undoes that (trainer/compat.py); a test importing TensorForce
    without it broke the remote-pool tests that ran after it in the same process, and only in some orders."""
    from trainer.compat import undo_msgpack_numpy_patch

    yield
    if undo_msgpack_numpy_patch():  # undone for the tests after it
        pytest.fail(
            f"{request.node.nodeid} left msgpack patched by msgpack_numpy: import TensorForce through "
            "trainer.compat.apply(), as the trainer does",
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def no_gcp_credentials(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads this machine's GCP credentials or price cache (tfcli/gke/price_source.py): no network."""
    home = tmp_path_factory.mktemp("gcp-home")
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(home / "gcloud"))
    monkeypatch.setenv("TFCLI_CACHE_DIR", str(home / "cache"))  # not XDG_CACHE_HOME: uv's and matplotlib's stay


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty tfcli project (``tfcli.yaml``, ``configs/<kind>/``, ``experiments/``, ``stacks/``), made the cwd."""
    (tmp_path / PROJECT_FILE).write_text("name: test\n")
    for kind in ("experiments", "clusters", "agents", "networks", "environments"):
        (tmp_path / "configs" / kind).mkdir(parents=True)
    (tmp_path / "experiments").mkdir()
    (tmp_path / "stacks").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project made by ``tfcli init lab`` (the bundled config library copied in), made the cwd."""
    from typer.testing import CliRunner

    from tfcli.cli.app import app

    result = CliRunner().invoke(app, ["init", str(tmp_path / "lab")])
    assert result.exit_code == 0, result.output
    monkeypatch.chdir(tmp_path / "lab")
    return tmp_path / "lab"


@pytest.fixture
def release_memory() -> Iterator[None]:
    """After a test that builds TensorForce agents in this process: collect them and hand the freed heap back to the
    OS (glibc keeps it otherwise), so that two test processes building ~100 agents between them stay within a
    24 GiB machine."""
    yield
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``small_disk("8m")``: a fresh tmpfs of that size under ``tmp_path``, unmounted after the test
    (``disk_kit.mount_tmpfs``: root or passwordless sudo, else the test fails saying so)."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        mounted.append(mount_tmpfs(tmp_path / f"disk-{len(mounted)}", size))
        return mounted[-1]

    yield mount
    for point in reversed(mounted):
        unmount(point)


@pytest.fixture(scope="session")
def gcs_server() -> Iterator[tuple[Any, str]]:
    from gcp_storage_emulator.server import create_server
    from gcs_preconditions import install

    from tfcli.local.supervisor import free_port

    install()  # the emulator checks ifGenerationMatch & co. as GCS does (tests/gcs_preconditions.py)
    port = free_port()
    server = create_server("127.0.0.1", port, in_memory=True)
    server.start()
    yield server, f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def gcs(gcs_server: tuple[Any, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A storage client on the emulator (emptied after each test); STORAGE_EMULATOR_HOST is set, so tfcli's own
    client talks to it too."""
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    server, url = gcs_server
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", url)
    yield storage.Client(project="test", credentials=AnonymousCredentials())
    server.wipe()


@pytest.fixture
def gcsfuse(gcs: Any, tmp_path: Path) -> Iterator[Callable[..., Path]]:
    """Mount a bucket of the emulator as a pod's GCS FUSE volume (tests/gcsfuse.py): ``gcsfuse(bucket, ttl=60)``
    returns the mountpoint, a folder of its own; every mount is unmounted after the test."""
    from gcsfuse import mounted

    with contextlib.ExitStack() as mounts:
        count = itertools.count()

        def mount(bucket: str, *, ttl: float | None = 60.0) -> Path:
            number = next(count)
            return mounts.enter_context(
                mounted(bucket, tmp_path / f"gcsfuse-{number}", ttl=ttl, log=tmp_path / f"gcsfuse-{number}.log")
            )

        yield mount


@pytest.fixture(scope="session")
def warm_zygote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One warm trainer (tfcli/local/zygote.py) per test process, its folder: TensorFlow and TensorForce imported
    once, each trainer forked from it. Named to no test but those that ask for :func:`warm_trainers`."""
    from tfcli.local.standing import WARM_VARIABLE
    from tfcli.local.warm import warm_trainer

    with warm_trainer(tmp_path_factory.mktemp("warm") / "warm.log"):
        folder = os.environ.pop(WARM_VARIABLE)  # set again per test by warm_trainers, not for the whole session
        yield folder


@pytest.fixture(autouse=True)
def no_standing_trainer(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test leaves a standing warm trainer (tfcli/local/standing.py) behind (``TFCLI_WARM_IDLE_SECONDS=0``),
    nor forks from one a user's run or another test left: each test has a runtime folder of its own (short, for Unix
    sockets), so a lone start's trainer starts fresh unless the test asks for :func:`warm_trainers`. A process that
    does not inherit the setting (a docs session's shell, as a user's terminal has none) may leave one there, even
    after its test (a detached supervisor's run ending late): it is ended with the test, and a later one finds no
    folder to serve from. Without this, a later test's trainer was forked by such a zygote, in a session of its own:
    a pause it sent "at once" came after the trainer had started, and a SIGKILLed supervisor's trainer paused."""
    from tfcli.local.standing import IDLE_VARIABLE, end_standing

    folder = Path(tempfile.mkdtemp(prefix="tfcli-rt-"))
    monkeypatch.setenv(IDLE_VARIABLE, "0")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield
    end_standing(folder)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def warm_trainers(warm_zygote: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test's local runs fork their trainers from :func:`warm_zygote`, as a local sweep's trials do, instead of
    paying ~5 s of imports per start: for the tests about what a run does, not about how a trainer process starts
    (those keep the fresh start that ``experiment start --local`` makes outside a sweep)."""
    from tfcli.local.standing import WARM_VARIABLE

    monkeypatch.setenv(WARM_VARIABLE, warm_zygote)

"""The registry's rules over declared capabilities (tfcli/runs/registry.py), with backends registered here alone:
what shared rules ask of a backend, answered without making it and without its name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tfcli.experiments.record import RunRecord
from tfcli.runs import registry
from tfcli.runs.backend import Backend
from trainer.kernel.errors import InvalidInput


def _unmade(caller: registry.Caller) -> Backend:
    raise AssertionError("a capability is answered without making the backend")


@pytest.fixture
def declared() -> Iterator[None]:
    """``cloud`` keeps its runs and runs on shared clusters; ``box`` declares nothing; ``here`` has a short flag."""
    added = [
        registry.Registration("cloud", _unmade, keeps_runs=True, title="Cloud", shared_clusters=True),
        registry.Registration("box", _unmade),
        registry.Registration("here", _unmade, flag="--here"),
    ]
    for registration in added:
        registry.register(registration)
    yield
    for registration in added:
        registry.unregister(registration.name)


def test_the_bundled_backends_declare_what_shared_rules_ask() -> None:
    import tfcli.backends  # noqa: F401  (registers local and gke)

    assert registry.on_shared_clusters() == ["gke"]
    assert (registry.flag("local"), registry.flag("gke")) == ("--local", "--backend gke")
    assert registry.keeps_runs("gke") and not registry.keeps_runs("local")


def test_flag_title_and_shared_clusters_come_from_the_registration(declared: None) -> None:
    assert (registry.flag("here"), registry.flag("box"), registry.flag("gone")) == (
        "--here",
        "--backend box",
        "--backend gone",
    )
    assert (registry.title("cloud"), registry.title("box"), registry.title("gone")) == ("Cloud", "box", "gone")
    assert "cloud" in registry.on_shared_clusters() and not {"box", "here"} & set(registry.on_shared_clusters())
    assert registry.registration("box").name == "box"


def test_an_unknown_name_is_bad_input_naming_where_it_was_read(declared: None) -> None:
    with pytest.raises(InvalidInput, match=r"run.json: backend: unknown backend 'boxx' \(did you mean 'box'\?\)"):
        registry.registration("boxx", "run.json: backend")
    with pytest.raises(InvalidInput, match=r"the registered backends are .*box, cloud, .*here"):
        registry.create("nope")


def test_keeps_runs_held_and_results_here(declared: None) -> None:
    assert registry.keeps_runs("cloud") and not registry.keeps_runs("box")
    assert registry.keeps_runs("gone") and not registry.keeps_runs(None)  # unknown: taken to keep; never started
    assert registry.held(RunRecord(backend="cloud")) and registry.held(RunRecord(backend="gone"))
    assert not registry.held(RunRecord(backend="cloud", stopped=True)) and not registry.held(RunRecord(backend="box"))
    assert not registry.held(RunRecord())
    assert registry.held_elsewhere(RunRecord(backend="cloud"), "box")
    assert not registry.held_elsewhere(RunRecord(backend="cloud"), "cloud")
    assert registry.results_here(RunRecord(backend="box"))  # left here by a backend that does not keep its runs
    assert not registry.results_here(RunRecord(backend="cloud"))  # a copy of what the backend still holds
    assert registry.results_here(RunRecord(backend="cloud", stopped=True))  # its stop downloaded them
    assert not registry.results_here(RunRecord())  # never started: none


def test_create_makes_the_backend_with_what_the_caller_lends_and_unregister_forgets_it() -> None:
    made: list[registry.Caller] = []

    def make(caller: registry.Caller) -> Backend:
        made.append(caller)
        return caller.observer  # type: ignore[no-any-return]

    lent = registry.Caller(observer="shown")
    registry.register(registry.Registration("made", make))
    try:
        assert registry.create("made", lent) == "shown" and made == [lent]
        assert registry.create("made") is None and made[-1] == registry.Caller()  # outside the CLI: nothing lent
        with pytest.raises(InvalidInput, match=r"^tfcli.yaml: backend: unknown backend 'mad'"):
            registry.create("mad", where="tfcli.yaml: backend")
        with pytest.raises(InvalidInput, match=r"^--backend: unknown backend 'mad'"):
            registry.create("mad")
    finally:
        registry.unregister("made")
    assert "made" not in registry.names()
    registry.unregister("made")  # forgetting an unknown name is no error

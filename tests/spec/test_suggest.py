"""The did-you-mean rule every name lookup shares (trainer/kernel/spec/suggest.py): what counts as close, in which
order, how many, and the underscore the 2018 client allowed."""

from __future__ import annotations

from trainer.kernel.spec.suggest import close_names, did_you_mean


def test_a_slip_of_a_key_is_close_and_the_closest_comes_first() -> None:
    assert close_names("cartpole-ppx", ["space-invaders-dqn", "cartpole-ppo", "gridworld-ppo"]) == ["cartpole-ppo"]
    assert close_names("cp-l", ["lr", "cp1"]) == ["cp1"]  # ratio 0.57: just above the cutoff
    assert close_names("lr-ash", ["lr", "lr-asha", "lr-as"]) == ["lr-asha", "lr-as", "lr"]
    assert close_names("cp3", ["cp2", "cp1"]) == ["cp2", "cp1"]  # equally close: in the order given


def test_nothing_alike_is_no_suggestion() -> None:
    assert close_names("lr", ["cp1", "cp2"]) == []
    assert close_names("abcd", ["abxyz"]) == []  # ratio 0.44
    assert close_names("abcd", ["abxy"]) == ["abxy"]  # ratio 0.5, the cutoff itself, is close
    assert did_you_mean("zzz", ["cp1"]) == ""
    assert did_you_mean("cp1", []) == ""


def test_an_underscore_reads_as_a_dash() -> None:
    assert close_names("shared_t4x", ["shared-t4"]) == ["shared-t4"]
    assert close_names("my_exp", ["myxexp", "my-exp", "other"]) == ["my-exp", "myxexp"]  # the dash one is exact
    assert close_names("a_b", ["a-b", "axb"]) == ["a-b", "axb"]  # 'a-b' to 'axb' is one slip (0.67)


def test_at_most_three_and_the_phrase() -> None:
    known = ["cp1", "cp2", "cp3", "cp4"]
    assert len(close_names("cp0", known)) == 3
    assert did_you_mean("cp0", ["cp1"]) == " (did you mean 'cp1'?)"
    assert did_you_mean("cp0", ["cp1", "cp2"]) == " (did you mean 'cp1' or 'cp2'?)"

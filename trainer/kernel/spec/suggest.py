"""Did-you-mean for a name that is looked up and not found: one rule for every lookup (experiments, sweeps, shared
clusters, library names), so a typo gets the same answer whichever flag it was typed in.

A name differs from what was meant by a slip of a key or two (``cartpole-ppx``, ``cp-l``) or by the underscore the
2018 client allowed (``my_experiment``), so ``_`` is read as ``-`` before comparing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

MAX_SUGGESTIONS = 3
CUTOFF = 0.5  # difflib's ratio: 'cp1' for 'cp-l' (0.57) passes, 'cp1' for 'lr' (0.0) does not


def close_names(name: str, known: Iterable[str]) -> list[str]:
    """The known names closest to ``name`` (difflib's ratio), best first, equally close ones in the order known lists
    them, at most :data:`MAX_SUGGESTIONS`; none when nothing is close."""
    wanted = name.replace("_", "-")
    scored = [(difflib.SequenceMatcher(None, candidate, wanted).ratio(), candidate) for candidate in known]
    close = [(score, candidate) for score, candidate in scored if score >= CUTOFF]
    close.sort(key=lambda pair: -pair[0])  # stable: names equally close keep the order they are listed in
    return [candidate for _, candidate in close[:MAX_SUGGESTIONS]]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'a' or 'b'?)`` to put after the message about ``name``; empty when nothing is close."""
    close = close_names(name, known)
    return f" (did you mean {' or '.join(repr(n) for n in close)}?)" if close else ""

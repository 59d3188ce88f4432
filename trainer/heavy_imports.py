"""TensorFlow and TensorForce imported with Python's cyclic garbage collector paused, and what they made frozen.

Importing them makes about 260,000 objects that live as long as the process. While they are made, each full
collection walks every one made so far: five of them during the import, about 0.55 s of the import's 2.9 s of CPU
on the project's 2-core machine (`python -c "import tensorflow, tensorforce"`, 3 runs each: 2.92 s against 2.36 s
paused). And every full collection after it, a test's ``gc.collect()`` included, walks them all again. Paused, then
frozen (:func:`gc.freeze`: moved to a permanent generation that no collection visits), the import makes no
collection of its own and later ones walk only what came after. The collector's docs recommend the same for a
process that forks without exec, as the warm trainer does (tfcli/local/zygote.py): disabled early, frozen before
the fork, so that the children's collections do not write to the pages they share with it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """No collection while the block imports; then the collector as it was, and everything alive frozen."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.freeze()

"""Make TensorForce 0.6.5 work on TensorFlow 2.12.1.

TensorForce 0.6.5 (the last release) was written against TF 2.6, whose ``tf.keras.optimizers`` classes had the
private ``_create_hypers`` / ``_create_slots`` API it drives directly. From TF 2.11 on those names point at the
new Keras optimizers, which lack that API, so building any agent fails with
``'Adam' object has no attribute '_create_hypers'``. TF 2.12 still ships the old classes under
``tf.keras.optimizers.legacy``: pointing TensorForce's optimizer table there is the whole fix.

Restoring a checkpoint breaks the same way: from TF 2.11 on, ``tf.train.Checkpoint.restore`` assigns the
``Trackable._update_uid`` property on every object it restores, and TensorForce's ``TrackableNestedDict`` lets only
``_self_*`` attributes through its ``__setattr__`` (a ``NestedDict`` raises ``NotImplementedError`` for any other),
so ``agent.restore`` fails with a bare ``NotImplementedError``. Properties of the class are routed to TensorFlow's
setter, which stores them under ``_self_*`` names.

Importing TensorForce also calls ``msgpack_numpy.patch()`` (for its own socket environment, which the trainer does
not use), replacing ``msgpack.packb``, ``Packer`` and friends process-wide: from then on numpy arrays are packed as
msgpack_numpy dicts before any ``default`` hook sees them, which breaks the trainer's transport in the learner
(an array action reaches an env-worker as a dict). The ``msgpack`` module is reloaded afterwards, which puts its
own functions back.

This is the only module that patches TensorForce; ``tests/trainer/test_compat.py`` builds a real PPO agent, runs an
update and restores a saved checkpoint, so the day this stops working a test fails rather than a user's run.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys

_applied = False


def apply() -> None:
    """Patch TensorForce once per process (idempotent); import TensorFlow quietly."""
    global _applied
    if _applied:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    # TensorForce's import trips TF's "Please fix your imports" deprecation warnings; they are not the user's.
    tf.get_logger().setLevel(logging.ERROR)
    from tensorforce.core.optimizers import tf_optimizer

    legacy = tf.keras.optimizers.legacy
    table = tf_optimizer.tensorflow_optimizers
    for key, cls_name in (
        ("adadelta", "Adadelta"),
        ("adagrad", "Adagrad"),
        ("adam", "Adam"),
        ("adamax", "Adamax"),
        ("ftrl", "Ftrl"),
        ("nadam", "Nadam"),
        ("rmsprop", "RMSprop"),
        ("sgd", "SGD"),
    ):
        table[key] = getattr(legacy, cls_name)
    _let_checkpoints_restore()
    _undo_msgpack_numpy_patch()
    _applied = True


def _undo_msgpack_numpy_patch() -> None:
    msgpack = sys.modules.get("msgpack")
    if msgpack is not None and "msgpack_numpy" in getattr(msgpack.packb, "__module__", ""):
        importlib.reload(msgpack)


def _let_checkpoints_restore() -> None:
    from tensorforce.core.utils.dicts import TrackableNestedDict
    from tensorforce.core.utils.nested_dict import NestedDict

    original = TrackableNestedDict.__setattr__

    def __setattr__(self: TrackableNestedDict, name: str, value: object) -> None:
        if isinstance(getattr(type(self), name, None), property):
            super(NestedDict, self).__setattr__(name, value)  # Trackable's property setter
        else:
            original(self, name, value)

    TrackableNestedDict.__setattr__ = __setattr__

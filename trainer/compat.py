"""Make TensorForce 0.6.5 work on TensorFlow 2.12.1.

TensorForce 0.6.5 (the last release) was written against TF 2.6, whose ``tf.keras.optimizers`` classes had the
private ``_create_hypers`` / ``_create_slots`` API it drives directly. From TF 2.11 on those names point at the
new Keras optimizers, which lack that API, so building any agent fails with
``'Adam' object has no attribute '_create_hypers'``. TF 2.12 still ships the old classes under
``tf.keras.optimizers.legacy``: pointing TensorForce's optimizer table there is the whole fix.

This is the only module that patches TensorForce; ``tests/trainer/test_compat.py`` builds a real PPO agent and
runs an update, so the day this stops working a test fails rather than a user's run.
"""

from __future__ import annotations

import logging
import os

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
    _applied = True

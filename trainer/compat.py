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

TensorForce writes one row of its episode buffers and replay memory as
``buffer.assign(tf.tensor_scatter_nd_update(buffer, indices, row))``, which copies the *whole* variable on every
write (its own in-place ``scatter_update`` lines are commented out). The buffers hold ``parallel_interactions x
max_episode_timesteps`` states, so on Atari (4 environments, 4,500-step episodes, 84x84x4 float states: 2 GB)
every act and observe copied gigabytes: 31 agent steps/s instead of 150+. In the modules that do it, the name
``tf`` is pointed at a proxy whose ``tensor_scatter_nd_update`` on a variable returns a marker, and a variable's
``assign`` of that marker does the in-place ``scatter_nd_update`` instead (same result and return type; anything
else passes through untouched).

Writing a variable in place has a price in TensorFlow: a variable that has been scattered into is in "copy on
read" mode, where every dense read copies all of it. TensorForce reads one environment's episode so far as
``buffer[parallel, :length]`` (a dense read, then a slice) when the episode ends, so each finished Space Invaders
episode copied the whole 2 GB states buffer: 5.8 s for the first (fresh pages) and ~0.2 s for each after, and peak
memory 5.9 GB instead of 3.8 GB. Such a slice of a variable is read as a gather of just those rows instead (the same
values; ~20 ms for a 700-step episode).

TensorForce wraps every method of every module (the agent's model, its policy, networks, layers, optimizers,
memories, ...) in its own ``tf.function`` and calls them from one another, so tracing the agent's observe graph (its
update included) built ~245 separate function graphs, each traced, signature-checked and copied into its caller:
~3 s of TensorFlow tracing before the first update of cartpole-ppo, a third of its time to solve CartPole. A nested
call is inlined anyway when TensorFlow runs the graph, so building those graphs buys nothing: in
``tensorforce.core.module`` the name ``tf`` points at a proxy whose ``function`` makes functions that, called
while a graph is being traced, run their Python body in place (the same conversions in and out, traced into the
caller's graph); called eagerly (the agent's act, observe, ... from the trainer) they are TensorFlow functions as
before. The same episodes come out step for step, and the time before the first update is roughly halved.

TensorForce drops a timestep-updating agent's ``start_updating`` once its first episode has ended: its observe
graph computes the update start as ``where(episodes > 0, 0, start + 2 * horizon)`` (core/models/tensorforce.py),
so DQN, DPG and AC agents update from the first episode's end on, whatever the spec says. The flagship
space-invaders-dqn (``start_updating: 10000``) made its first update at ~700 timesteps, sampling batches of 32 from a
replay memory of one episode, and those updates made its first 10,000 timesteps several times slower. The
``last_update`` counter the same graph compares against is started so that the first update comes at
``start_updating`` (and never earlier if no episode has ended by then); from there the schedule is TensorForce's.

This is the only module that patches TensorForce (``trainer/checkpoints.py`` only leaves its episode buffers out
of a save, for the time of the save); ``tests/trainer/test_compat.py`` builds a real PPO agent, runs an
update and restores a saved checkpoint, so the day this stops working a test fails rather than a user's run.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import types
import warnings
from typing import Any

log = logging.getLogger(__name__)
_applied = False


def quiet_tensorflow_import() -> None:
    """What every process does before it imports TensorFlow, so that no notice that is not the user's heads a log.

    TensorFlow's C++ info lines go (``TF_CPP_MIN_LOG_LEVEL`` 2). And TensorFlow imports googleapiclient when it is
    installed (its GCE cluster resolver), which the development environment has for the stand-ins' discovery
    documents; google-api-core then announces the end of its Python 3.11 support (:func:`quiet_python_version_notice`).
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    quiet_python_version_notice()


def quiet_python_version_notice() -> None:
    """Silence google-api-core's FutureWarning "You are using a Python version ..." (the end of its Python 3.11
    support, 2027): nothing to act on yet (as pyproject's filterwarnings), and not the user's. Exactly that warning:
    every other one still shows. Called before anything imports google-api-core (TensorFlow, google-cloud-storage)."""
    warnings.filterwarnings("ignore", message="You are using a Python version", category=FutureWarning)


def apply() -> None:
    """Patch TensorForce once per process (idempotent); import TensorFlow quietly."""
    global _applied
    if _applied:
        return
    from trainer.heavy_imports import collection_paused

    with collection_paused():
        _apply()
    _applied = True


def _apply() -> None:
    quiet_tensorflow_import()
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
    _write_buffers_in_place(tf)
    _read_buffer_rows_in_place(tf)
    _trace_nested_functions_in_place(tf)
    _start_updating_when_told()
    undo_msgpack_numpy_patch()


def undo_msgpack_numpy_patch() -> bool:
    """Put msgpack's own functions back where TensorForce's import patched them (module docstring); whether it had.
    The tests' guard (tests/conftest.py) calls it after each test too."""
    msgpack = sys.modules.get("msgpack")
    if msgpack is None or "msgpack_numpy" not in getattr(msgpack.packb, "__module__", ""):
        return False
    importlib.reload(msgpack)
    return True


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


# The TensorForce modules that write a variable through ``assign(tensor_scatter_nd_update(variable, ...))``.
_COPYING_MODULES = (
    "tensorforce.core.models.model",
    "tensorforce.core.models.tensorforce",
    "tensorforce.core.memories.queue",
)


class _ScatterInto:
    """``tensor_scatter_nd_update(variable, indices, updates)``, not yet computed: ``variable.assign`` of it
    becomes ``variable.scatter_nd_update(indices, updates)``."""

    def __init__(self, variable: Any, indices: Any, updates: Any, name: str | None) -> None:
        self.variable, self.indices, self.updates, self.name = variable, indices, updates, name


class _TensorFlowProxy(types.ModuleType):
    """The ``tensorflow`` module as a TensorForce module sees it through its global name ``tf``: every attribute
    passes through, except what a subclass defines."""

    def __init__(self, tf: types.ModuleType) -> None:
        super().__init__(tf.__name__)
        self._tf = tf

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tf, name)


def _point_tf_at(module_name: str, tf: types.ModuleType, proxy: _TensorFlowProxy, without: str) -> None:
    """Make ``proxy`` the module's ``tf``; if the module no longer imports TensorFlow as ``tf`` (TensorForce
    changed), leave it and say what is lost (``without``)."""
    module = importlib.import_module(module_name)
    if getattr(module, "tf", None) is not tf:
        log.warning("%s no longer imports tensorflow as tf; %s", module_name, without)
        return
    setattr(module, "tf", proxy)  # noqa: B010 - the module's global name, as TensorForce's code reads it


class _TensorFlowWithInPlaceScatter(_TensorFlowProxy):
    """The ``tensorflow`` module, except that scattering into a variable is deferred to its ``assign``."""

    def tensor_scatter_nd_update(self, tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Any:
        if isinstance(tensor, self._tf.Variable):
            return _ScatterInto(tensor, indices, updates, name)
        return self._tf.tensor_scatter_nd_update(tensor=tensor, indices=indices, updates=updates, name=name)


def _write_buffers_in_place(tf: types.ModuleType) -> None:
    from tensorflow.python.ops.resource_variable_ops import BaseResourceVariable

    original_assign = BaseResourceVariable.assign

    def assign(self: Any, value: Any, use_locking: Any = None, name: Any = None, read_value: bool = True) -> Any:
        if isinstance(value, _ScatterInto):
            if value.variable is not self:  # assigning one variable's scatter to another: do what TF would
                value = tf.tensor_scatter_nd_update(value.variable, value.indices, value.updates, name=value.name)
            else:
                written = self.scatter_nd_update(value.indices, value.updates, name=name)
                return written if read_value else written.op
        return original_assign(self, value, use_locking=use_locking, name=name, read_value=read_value)

    BaseResourceVariable.assign = assign
    proxy = _TensorFlowWithInPlaceScatter(tf)
    for module_name in _COPYING_MODULES:
        _point_tf_at(module_name, tf, proxy, without="its buffers are written by copying")


def _read_buffer_rows_in_place(tf: types.ModuleType) -> None:
    from tensorflow.python.ops.resource_variable_ops import BaseResourceVariable

    original_getitem = BaseResourceVariable.__getitem__

    def __getitem__(self: Any, key: Any) -> Any:
        if _is_rows_of_one_buffer(self, key):
            index, rows = key
            rows_in_buffer = tf.raw_ops.VariableShape(input=self.handle, out_type=tf.int64)[1]  # no read of it
            stop = tf.cast(rows.stop, tf.int64)
            stop = tf.clip_by_value(tf.where(stop < 0, stop + rows_in_buffer, stop), 0, rows_in_buffer)  # as slicing
            positions = tf.range(stop)
            return self.gather_nd(
                tf.stack([tf.fill(tf.shape(positions), tf.cast(index, positions.dtype)), positions], axis=1)
            )
        return original_getitem(self, key)

    BaseResourceVariable.__getitem__ = __getitem__


def _is_rows_of_one_buffer(variable: Any, key: Any) -> bool:
    """``buffer[parallel, :n]``: TensorForce's read of one environment's episode so far (a scalar tensor index, then
    the first ``n`` rows), which the patch reads with the same values as the slice, ``n`` beyond the rows or negative
    included."""
    if not (isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], slice)):
        return False
    index, rows = key
    return (
        rows.start is None
        and rows.step is None
        and rows.stop is not None
        and getattr(index, "shape", None) is not None
        and index.shape.rank == 0
        and variable.shape.rank is not None
        and variable.shape.rank >= 2
    )


class _InlinedWhenTracing:
    """A TensorForce module function: a ``tf.function`` when called eagerly, its Python body when called while
    another function is being traced (so that it is traced into that graph instead of into a graph of its own)."""

    def __init__(self, tf: types.ModuleType, func: Any, **options: Any) -> None:
        self._tf = tf
        self.python_function = func
        self.function = tf.function(func=func, **options)

    def __call__(self, *args: Any) -> Any:
        if self._tf.inside_function():
            return self.python_function(*args)
        return self.function(*args)

    def __getattr__(self, name: str) -> Any:  # get_concrete_function, ... for saving and exporting
        return getattr(self.function, name)


class _TensorFlowWithNestedTracing(_TensorFlowProxy):
    """The ``tensorflow`` module, except that ``function`` makes :class:`_InlinedWhenTracing` functions."""

    def function(self, func: Any = None, **options: Any) -> _InlinedWhenTracing:
        return _InlinedWhenTracing(self._tf, func, **options)


def _trace_nested_functions_in_place(tf: types.ModuleType) -> None:
    proxy = _TensorFlowWithNestedTracing(tf)
    _point_tf_at("tensorforce.core.module", tf, proxy, without="nested functions trace separately")


def _start_updating_when_told() -> None:
    from tensorforce.core.models.tensorforce import TensorforceModel

    original_initialize = TensorforceModel.initialize

    def initialize(self: Any) -> None:
        original_initialize(self)
        first = _first_update_floor(self)
        if first is not None:
            self.last_update.assign(first)

    TensorforceModel.initialize = initialize


def _first_update_floor(model: Any) -> int | None:
    """The ``last_update`` to start from so that the first update comes at ``start_updating`` timesteps, for the
    models whose observe graph drops it once an episode has ended (None: the model honours it, or it is 0)."""
    if model.update_unit != "timesteps" or model.update_frequency is None or model.reward_horizon == "episode":
        return None
    if not (model.update_start.is_constant() and model.update_frequency.is_constant()):
        log.warning(
            "start_updating or update_frequency is a schedule: TensorForce starts updating after the first episode"
        )
        return None
    frequency = int(model.update_frequency.final_value())
    past_horizon = max(
        int(model.policy.past_horizon(on_policy=False).numpy()),
        int(model.baseline.past_horizon(on_policy=False).numpy()),
    )
    start = max(int(model.update_start.final_value()), frequency + past_horizon)
    buffer_observe = model.config.buffer_observe
    after_episodes = 0 if buffer_observe == "episode" else int(buffer_observe)
    if start <= after_episodes:
        return None
    return start - after_episodes - frequency

"""The encoding of one message: msgpack for the structure, numpy arrays as raw buffers beside it, never pickle.

A frame body is::

    u32 H | H bytes of msgpack (the message) | buffer area (the arrays' bytes, each at an 8-byte aligned offset)

(all integers big-endian). Inside the msgpack, an array is an extension value that names its dtype, its shape
and where its bytes lie in the buffer area; decoding makes it a numpy array *over the received frame* (no copy,
writable). Only plain numeric dtypes cross (bool, int, uint, float, complex); anything else — object arrays,
structured dtypes — is refused on both sides, so decoding never runs code chosen by the sender.

Tuples stay tuples (TensorForce specs hold shapes as tuples) and numpy scalars stay numpy scalars.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import msgpack
import numpy as np

from trainer.transport.errors import FrameError

_ARRAY, _TUPLE, _SCALAR = 1, 2, 3
_KINDS = "biufc"  # bool, int, uint, float, complex
_MAX_NDIM = 32  # numpy's own limit
_ALIGN = 8
_BASES: tuple[type[Any], ...] = (bool, int, float, str, bytes, list, dict)
_U32 = struct.Struct(">I")
_ARRAY_HEAD = struct.Struct(">BB")  # dtype length, ndim
_ARRAY_TAIL = struct.Struct(">QQ")  # offset in the buffer area, byte count


def _check_dtype(dtype: np.dtype[Any]) -> None:
    if dtype.kind not in _KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise TypeError(f"cannot send a numpy array of dtype {dtype} (only bool, int, uint, float and complex)")


def encode(message: Any) -> list[bytes | memoryview]:
    """The frame body of ``message`` as parts to write one after the other (arrays' bytes are not copied)."""
    buffers: list[bytes | memoryview] = []
    area = 0  # bytes in the buffer area so far

    def default(value: Any) -> Any:
        nonlocal area
        if isinstance(value, np.ndarray):
            _check_dtype(value.dtype)
            # ascontiguousarray makes a 0-d array 1-d: reshape keeps a 0-d observation or action 0-d.
            array = np.ascontiguousarray(value).reshape(value.shape)
            if pad := -area % _ALIGN:
                buffers.append(bytes(pad))
                area += pad
            dtype = array.dtype.str.encode()
            ext = b"".join(
                (
                    _ARRAY_HEAD.pack(len(dtype), array.ndim),
                    dtype,
                    struct.pack(f">{array.ndim}Q", *array.shape),
                    _ARRAY_TAIL.pack(area, array.nbytes),
                )
            )
            if array.nbytes:
                buffers.append(array.reshape(-1).view(np.uint8).data)
                area += array.nbytes
            return msgpack.ExtType(_ARRAY, ext)
        if isinstance(value, np.generic):
            _check_dtype(value.dtype)
            dtype = value.dtype.str.encode()
            return msgpack.ExtType(_SCALAR, bytes((len(dtype),)) + dtype + value.tobytes())
        if isinstance(value, tuple):
            return msgpack.ExtType(_TUPLE, msgpack.packb(list(value), default=default, strict_types=True))
        # strict_types sends subclasses here (IntEnum, OrderedDict, ...): pass them on as their base type.
        for base in _BASES:
            if isinstance(value, base):
                return base(value)
        raise TypeError(f"cannot send a value of type {type(value).__name__}")

    header = msgpack.packb(message, default=default, strict_types=True)
    return [_U32.pack(len(header)), header, *buffers]


def _dtype(name: bytes) -> np.dtype[Any]:
    text = name.decode("ascii")
    dtype = np.dtype(text)
    if dtype.str != text:  # only numpy's canonical spelling ('<f4', '|u1', ...) is accepted
        raise ValueError(f"non-canonical dtype {text!r}")
    _check_dtype(dtype)
    return dtype


def decode(body: bytearray | memoryview) -> Any:
    """The message in a frame body; raises FrameError for anything malformed."""
    view = memoryview(body)
    try:
        if len(view) < _U32.size:
            raise ValueError("frame shorter than its header length")
        (size,) = _U32.unpack_from(view)
        if size > len(view) - _U32.size:
            raise ValueError(f"header of {size} bytes in a frame of {len(view)}")
        header = view[_U32.size : _U32.size + size]
        area = view[_U32.size + size :]

        def ext_hook(code: int, data: bytes) -> Any:
            if code == _ARRAY:
                name_length, ndim = _ARRAY_HEAD.unpack_from(data)
                if ndim > _MAX_NDIM:
                    raise ValueError(f"array of {ndim} dimensions")
                at = _ARRAY_HEAD.size
                dtype = _dtype(data[at : at + name_length])
                at += name_length
                shape = struct.unpack_from(f">{ndim}Q", data, at)
                at += 8 * ndim
                offset, nbytes = _ARRAY_TAIL.unpack_from(data, at)
                if at + _ARRAY_TAIL.size != len(data):
                    raise ValueError("array header of the wrong length")
                count = math.prod(shape)
                if nbytes != count * dtype.itemsize or offset + nbytes > len(area):
                    raise ValueError(f"array {dtype}{list(shape)} does not match its {nbytes} bytes at {offset}")
                if count == 0:
                    return np.empty(shape, dtype)
                return np.frombuffer(area, dtype, count, offset).reshape(shape)
            if code == _SCALAR:
                dtype = _dtype(data[1 : 1 + data[0]])
                raw = data[1 + data[0] :]
                if len(raw) != dtype.itemsize:
                    raise ValueError(f"scalar {dtype} of {len(raw)} bytes")
                return np.frombuffer(raw, dtype)[0]
            if code == _TUPLE:
                items = msgpack.unpackb(data, ext_hook=ext_hook)
                if not isinstance(items, list):
                    raise ValueError("tuple extension without a list")
                return tuple(items)
            raise ValueError(f"unknown extension type {code}")

        return msgpack.unpackb(header, ext_hook=ext_hook)
    except FrameError:
        raise
    except Exception as error:  # msgpack, struct, numpy and our own checks: all mean "malformed"
        raise FrameError(f"malformed frame: {error}") from None

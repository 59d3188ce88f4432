"""The transport's frame encoding (trainer/transport/codec.py) on its own: round-trips of the shapes that are easy to
get wrong (one-element and 0-d arrays, odd sizes before aligned ones, tuples holding arrays) and forged frames."""

from __future__ import annotations

import re
import struct
from typing import Any

import msgpack
import numpy as np
import pytest

from trainer.transport.codec import decode, encode
from trainer.transport.errors import FrameError


def round_trip(message: Any) -> Any:
    return decode(bytearray(b"".join(encode(message))))


def same(back: Any, sent: Any) -> None:
    """Equal values of equal types, arrays by dtype, shape and contents, all the way down."""
    assert type(back) is type(sent), (back, sent)
    if isinstance(sent, np.ndarray):
        assert (back.dtype, back.shape) == (sent.dtype, sent.shape)
        np.testing.assert_array_equal(back, sent)
    elif isinstance(sent, (list, tuple)):
        assert len(back) == len(sent)
        for b, s in zip(back, sent, strict=True):
            same(b, s)
    elif isinstance(sent, dict):
        assert back.keys() == sent.keys()
        for key in sent:
            same(back[key], sent[key])
    else:
        assert back == sent


def layout(message: Any) -> list[tuple[str, tuple[int, ...], int, int]]:
    """(dtype, shape, offset, bytes) of each array in an encoded message, in order, read straight from the header."""
    parts = encode(message)
    arrays: list[tuple[str, tuple[int, ...], int, int]] = []

    def hook(code: int, data: bytes) -> Any:
        if code == 1:
            name_length, ndim = struct.unpack_from(">BB", data)
            name = data[2 : 2 + name_length].decode()
            shape = struct.unpack_from(f">{ndim}Q", data, 2 + name_length)
            offset, nbytes = struct.unpack_from(">QQ", data, 2 + name_length + 8 * ndim)
            arrays.append((name, shape, offset, nbytes))
        elif code == 2:
            msgpack.unpackb(data, ext_hook=hook)
        return None

    msgpack.unpackb(bytes(parts[1]), ext_hook=hook)
    assert struct.unpack(">I", bytes(parts[0]))[0] == len(parts[1])
    return arrays


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int64", "float32", "float64", "complex128"])
def test_one_element_arrays_round_trip(dtype: str) -> None:
    for array in (np.array([1], dtype), np.array([[1]], dtype), np.array([0], dtype)):
        back = round_trip(array)
        same(back, array)
        assert back.flags.writeable


def test_one_element_arrays_come_back_with_their_value_not_uninitialised_memory() -> None:
    # Many different values: an array made without reading the frame would not hold them all.
    values = [np.array([value], np.int64) for value in range(1000, 1064)]
    same(round_trip(values), values)
    same(round_trip([np.array([3.25]), np.array([-7.5])]), [np.array([3.25]), np.array([-7.5])])


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64", "float32", "complex128"])
def test_zero_d_arrays_stay_zero_d(dtype: str) -> None:
    # A 0-d array (a scalar observation, a single action) came back as shape (1,): ascontiguousarray makes it 1-d.
    message = [np.array(1, dtype), np.array([1], dtype), (np.array(0, dtype),)]
    same(round_trip(message), message)
    assert round_trip(np.array(-7.5)).shape == ()


def test_empty_arrays_keep_their_shape_and_dtype() -> None:
    message = [np.zeros((0, 3), np.int16), np.zeros(0, np.float32), np.zeros((2, 0), bool)]
    same(round_trip(message), message)


def test_odd_sized_arrays_are_followed_by_arrays_at_8_byte_offsets() -> None:
    message = [
        np.arange(3, dtype=np.uint8),  # 3 bytes
        np.arange(5, dtype=np.float64),  # padded to 8
        np.array([True]),  # 1 byte at 48
        np.arange(3, dtype=np.int16),  # 6 bytes at 56
        np.zeros(0, np.int32),  # no bytes
        np.array([2**40], np.int64),  # at 64
    ]
    same(round_trip(message), message)
    assert [(offset, nbytes) for _, _, offset, nbytes in layout(message)] == [
        (0, 3),
        (8, 40),
        (48, 1),
        (56, 6),
        (64, 0),
        (64, 8),
    ]
    parts = encode(message)
    # The buffer area: arrays' bytes and the zero padding between them, nothing else.
    assert sum(len(part) for part in parts[2:]) == 72


def test_tuples_holding_arrays_nest_and_stay_tuples() -> None:
    message = {
        "spec": (np.arange(3, dtype=np.uint8), ((np.ones((2, 2)), 5), ()), "x"),
        "list": [(1, 2), [3, (np.int32(4),)]],
        "after": np.arange(7, dtype=np.int16),
    }
    same(round_trip(message), message)
    # Arrays inside tuples share the one buffer area, in order, each aligned.
    assert [offset for _, _, offset, _ in layout(message)] == [0, 8, 40]


def test_numpy_scalars_and_plain_values_keep_their_types() -> None:
    message = [np.float32(1.5), np.int8(-3), np.bool_(True), np.complex64(1 + 2j), 7, 1.5, True, "é", b"\0", None]
    same(round_trip(message), message)


def test_subclasses_of_plain_types_are_sent_as_their_base_type() -> None:
    from collections import OrderedDict
    from enum import IntEnum

    class Colour(IntEnum):
        RED = 3

    back = round_trip([Colour.RED, OrderedDict(a=1)])
    assert back == [3, {"a": 1}] and type(back[0]) is int and type(back[1]) is dict


def test_values_that_cannot_cross_are_refused_when_encoding() -> None:
    with pytest.raises(TypeError, match="cannot send a value of type set"):
        encode({1, 2})
    with pytest.raises(TypeError, match="dtype <U1"):
        encode(np.array(["a"]))
    with pytest.raises(TypeError, match="dtype"):
        encode(np.zeros(2, dtype=[("a", "<i4")]))
    # An int32 with named byte fields: kind 'i' like a plain int32, but a structured dtype all the same.
    with pytest.raises(TypeError, match="dtype"):
        encode(np.zeros(2, dtype=np.dtype(("<i4", [("r", "u1"), ("g", "u1"), ("b", "u1"), ("a", "u1")]))))
    with pytest.raises(TypeError, match="dtype"):
        encode(np.str_("a"))


def array_ext(dtype: bytes, shape: tuple[int, ...], offset: int, nbytes: int, extra: bytes = b"") -> msgpack.ExtType:
    data = struct.pack(">BB", len(dtype), len(shape)) + dtype + struct.pack(f">{len(shape)}Q", *shape)
    return msgpack.ExtType(1, data + struct.pack(">QQ", offset, nbytes) + extra)


def frame(header_value: Any, area: bytes = b"", *, size: int | None = None) -> bytearray:
    header = msgpack.packb(header_value)
    return bytearray(struct.pack(">I", len(header) if size is None else size) + header + area)


def test_a_hand_made_frame_decodes_as_encode_would_make_it() -> None:
    # The forged frames below differ from this one in one thing each.
    back = decode(frame([array_ext(b"<i2", (2,), 0, 4)], b"\x01\x00\x02\x00"))
    same(back, [np.array([1, 2], np.int16)])


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (bytearray(b"\x00\x00"), r"frame shorter than its header length"),
        (bytearray(b"\x00\x00\x00\x00"), r"Unpack failed: incomplete input"),  # long enough, but no header
        (frame([1, 2], size=100), r"header of 100 bytes in a frame of 7"),
        (frame([1, 2], size=4), r"header of 4 bytes in a frame of 7"),  # one byte more than there is
        (frame([array_ext(b"<i2", (2,), 0, 4)], b"\x01\x00\x02"), r"array int16\[2\] does not match its 4 bytes at 0"),
        (frame([array_ext(b"<i2", (2,), 2, 4)], b"\x01\x00\x02\x00"), r"array int16\[2\] does not match .* at 2"),
        (frame([array_ext(b"<i2", (3,), 0, 4)], b"\x01\x00\x02\x00"), r"array int16\[3\] does not match .* at 0"),
        (frame([array_ext(b"<i2", (1,), 0, 2, b"\x00")], b"\x01\x00"), r"array header of the wrong length"),
        (frame([array_ext(b"<i2", (1,) * 33, 0, 2)], b"\x01\x00"), r"array of 33 dimensions"),
        (frame([array_ext(b"<i2", (1,) * 32, 0, 2)], b"\x01\x00"), None),  # numpy's limit itself is fine
        (frame([array_ext(b"i2", (1,), 0, 2)], b"\x01\x00"), r"non-canonical dtype 'i2'"),
        (frame([array_ext(b"|O", (1,), 0, 8)], bytes(8)), r"cannot send a numpy array of dtype object .*"),
        (frame([array_ext(b"|O8", (1,), 0, 8)], bytes(8)), r"non-canonical dtype '\|O8'"),
        (frame([array_ext(b"|V2", (1,), 0, 2)], b"\x01\x00"), r"cannot send a numpy array of dtype \|V2 .*"),
        (frame([array_ext(b"<U1", (1,), 0, 4)], bytes(4)), r"cannot send a numpy array of dtype <U1 .*"),
        (frame([msgpack.ExtType(3, b"\x03<i2\x01")]), r"scalar int16 of 1 bytes"),
        (frame([msgpack.ExtType(3, b"\x03<i2\x01\x00\x00")]), r"scalar int16 of 3 bytes"),
        (frame([msgpack.ExtType(3, b"\x02|O" + bytes(8))]), r"cannot send a numpy array of dtype object .*"),
        (frame([msgpack.ExtType(2, msgpack.packb({"a": 1}))]), r"tuple extension without a list"),
        (frame([msgpack.ExtType(2, msgpack.packb([msgpack.ExtType(9, b"")]))]), r"unknown extension type 9"),
        (frame([msgpack.ExtType(7, b"")]), r"unknown extension type 7"),
        (frame([msgpack.ExtType(1, array_ext(b"<i2", (1,), 0, 2).data[:6])]), r"unpack_from requires .*"),  # cut short
    ],
)
def test_forged_frames_are_refused(body: bytearray, reason: str | None) -> None:
    if reason is None:
        assert decode(body)[0].shape == (1,) * 32
        return
    with pytest.raises(FrameError) as raised:
        decode(body)
    # The whole message, so that a garbled one does not pass for the right one.
    assert re.fullmatch(f"malformed frame: {reason}", str(raised.value)), str(raised.value)


def test_a_scalar_frame_decodes_to_its_numpy_type() -> None:
    back = decode(frame([msgpack.ExtType(3, b"\x03<i2\x05\x00")]))
    assert type(back[0]) is np.int16 and back[0] == 5

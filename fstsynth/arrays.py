"""Flat integer arrays, and `.npz` archives of them read without numpy.

Public API:
    Array, Array.of(ndarray), Array.range(n), Array.flat(), Array.tolist(), Array.numpy(), Array.size
    read_npz(data) -> dict[str, Array], write_npz(stream, arrays), Error

The apply tables are a few integer arrays per pass. A model keeps them in numpy's
`.npz` format (a zip of `.npy` files: a short header giving the element type and the
shape, then the raw values), which numpy writes. `read_npz` reads them with the
standard library alone: `fstsynth apply` on a few words then never imports numpy
(about a tenth of a second of start-up), and numpy is imported only when a batch is
large enough for it to pay (`fstsynth.tables`), viewing the very same bytes. Only what
the tables use is accepted: little-endian int32, int64 and uint64, C order, no object
arrays (nothing to unpickle).
"""

from __future__ import annotations

import array
import io
import re
import sys
import zipfile
from typing import IO, TYPE_CHECKING, Any, Mapping, NamedTuple

from fstsynth.errors import UserError

if TYPE_CHECKING:
    import numpy as np

#: numpy type -> (array module type code, item size).
_TYPES = {"<i4": ("i", 4), "<i8": ("q", 8), "<u8": ("Q", 8)}
_MAGIC = b"\x93NUMPY"
_HEADER = re.compile(
    r"^\{'descr': '(?P<descr>[<>|]?[iu][48])', 'fortran_order': (?P<fortran>True|False), "
    r"'shape': \((?P<shape>[0-9, ]*)\), \}\s*$"
)


class Error(UserError):
    """An archive or array is not one of the tables' (damaged, or not written by numpy)."""


class _ArrayFields(NamedTuple):
    dtype: str
    shape: tuple[int, ...]
    data: bytes


class Array(_ArrayFields):
    """An integer array: numpy type `dtype` (one of `_TYPES`), `shape`, and its values
    as bytes in C order. (A NamedTuple, not a dataclass: making a dataclass is code
    compiled at import, a share of every `apply`'s start-up.)"""

    __slots__ = ()

    def __new__(cls, dtype: str, shape: tuple[int, ...], data: bytes) -> "Array":
        if dtype not in _TYPES:
            raise Error(f"unsupported array type {dtype!r}")
        made = super().__new__(cls, dtype, shape, data)
        if len(data) != made.size * _TYPES[dtype][1]:
            raise Error(f"array of shape {shape} has {len(data)} bytes")
        return made

    @classmethod
    def of(cls, values: "np.ndarray", dtype: str | None = None) -> "Array":
        import numpy as np

        values = np.ascontiguousarray(values, dtype=np.dtype(dtype) if dtype else None)
        return cls(values.dtype.str, tuple(values.shape), values.tobytes())

    @classmethod
    def range(cls, n: int) -> "Array":
        """0, 1, ..., n - 1 as int32."""
        values = array.array("i", range(n))
        if sys.byteorder != "little":
            values.byteswap()
        return cls("<i4", (n,), values.tobytes())

    @property
    def size(self) -> int:
        count = 1
        for n in self.shape:
            count *= n
        return count

    def flat(self) -> list[int]:
        """The values, in C order, as one Python list."""
        code, _ = _TYPES[self.dtype]
        values = array.array(code)
        values.frombytes(self.data)
        if sys.byteorder != "little":
            values.byteswap()
        return values.tolist()

    def tolist(self) -> Any:
        """The values as (nested) Python lists, or an int for a 0-d array."""
        values = self.flat()
        if not self.shape:
            return values[0]
        return _nest(values, self.shape)

    def numpy(self) -> "np.ndarray":
        """A read-only numpy view of the same bytes."""
        import numpy as np

        return np.frombuffer(self.data, dtype=np.dtype(self.dtype)).reshape(self.shape)


def _nest(values: list, shape: tuple[int, ...]) -> list:
    if len(shape) == 1:
        return values
    step = len(values) // shape[0] if shape[0] else 0
    return [_nest(values[k * step : (k + 1) * step], shape[1:]) for k in range(shape[0])]


def read_npz(data: bytes) -> dict[str, Array]:
    """The arrays of an `.npz` archive written by `write_npz` (Error if it is not one)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        out = {}
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                raise Error(f"not an array: {info.filename!r}")
            out[info.filename[: -len(".npy")]] = _read_npy(archive.read(info))
        return out
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, ValueError) as exc:
        raise Error(f"not a readable archive ({type(exc).__name__})") from None


def _read_npy(blob: bytes) -> Array:
    if blob[:6] != _MAGIC or len(blob) < 10:
        raise Error("not a .npy array")
    major = blob[6]
    if major == 1:
        size, start = int.from_bytes(blob[8:10], "little"), 10
    elif major in (2, 3):
        size, start = int.from_bytes(blob[8:12], "little"), 12
    else:
        raise Error(f"unknown .npy version {major}")
    try:
        header = blob[start : start + size].decode("latin-1")
    except UnicodeDecodeError:
        raise Error("bad .npy header") from None
    found = _HEADER.match(header)
    if found is None or found["fortran"] == "True":
        raise Error("bad .npy header (only integer arrays in C order)")
    shape = tuple(int(n) for n in found["shape"].replace(" ", "").split(",") if n)
    return Array(found["descr"], shape, blob[start + size :])


def write_npz(stream: IO[bytes], arrays: Mapping[str, Array]) -> None:
    """Write `arrays` as an (uncompressed) `.npz` archive."""
    import numpy as np

    named: dict[str, Any] = {name: a.numpy() for name, a in arrays.items()}
    np.savez(stream, **named)

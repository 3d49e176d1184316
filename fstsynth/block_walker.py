"""The numpy block walker: a block of plain lines from UTF-8 bytes to UTF-8 bytes,
without a Python object per token. The same contract as the compiled walker's
`apply_block` (fstsynth/_walk.c), which is used instead where it is built; the byte
front end (`fstsynth.stream.ByteApplier`) drives either.

Public API:
    NumpyBlockWalker(tables, seen), .usable, .apply_block(data, sep) -> None | (bytes, list[int])
    OTHER_SPACE, KEY_WORDS

`apply_block(data, sep)`: `data` is complete lines of valid UTF-8 (the caller checks
that, and NFC) of tokens separated by single spaces; each line's output is written as
its tokens joined by `sep`, then a newline. None for a block the caller must read
another way: tabs, `#`, CRs, other white space, empty tokens other than empty lines, a
one-token line whose token is not seen (perhaps an unspaced word), and here also a
word longer than `table_format.LONG_WORD` (walked alone by the line path). The list:
the lines (from 0) that hold an unseen token (the caller writes them again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from fstsynth.table_format import LONG_WORD

if TYPE_CHECKING:
    import numpy as np

    from fstsynth.tables import Tables

#: The white space `str.split` splits at, besides the space and the newline.
#: (Written out: computing it costs start-up time; tests/test_stream.py checks it.)
OTHER_SPACE = (
    "\t\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

#: Bytes a block this walker reads never has: tab, `#`, CR and the other ASCII white
#: space but the space and the newline (`OTHER_SPACE`'s); and the first bytes of the
#: UTF-8 of its other characters (a block with any of these is looked at as text).
_DECLINED_BYTES = sorted({ord(c) for c in OTHER_SPACE if c.isascii()} | {ord("#")})
_SPACE_LEADS = sorted({c.encode("utf-8")[0] for c in OTHER_SPACE if not c.isascii()})

#: Tokens are packed into 64-bit words for lookup, at most this many.
KEY_WORDS = 4


def plain_tokens(tokens: Sequence[str]) -> bool:
    """Whether every token can be read from bytes between single spaces: none is empty
    or holds white space (both block walkers need it)."""
    return all(t and not any(c.isspace() for c in t) for t in tokens)


class NumpyBlockWalker:
    """Token lookup without Python objects: a token's first 8 UTF-8 bytes, read as a
    little-endian 64-bit word straight from the block (an unaligned view of it), are
    its key; a multiplicative hash of the key (chosen so that the tables' tokens fall
    in distinct slots) finds the one token it can be, which is then checked on its key,
    its length and its later bytes. Tables whose tokens cannot be told apart by their
    first 8 bytes, or are longer than KEY_WORDS words, or hold a NUL or white space,
    are not read this way (`usable` is False). numpy is imported on the first block."""

    def __init__(self, tables: "Tables", seen: Sequence[bool]) -> None:
        self._tables = tables
        self._seen_flags = list(seen)
        self._encoded = [t.encode("utf-8") for t in tables.tokens]
        self.words = max([1] + [(len(e) + 7) // 8 for e in self._encoded])
        self.usable = (
            self.words <= KEY_WORDS
            and plain_tokens(tables.tokens)
            and not any(b"\0" in e for e in self._encoded)
            and len({e[:8] for e in self._encoded}) == len(self._encoded)
        )
        self._np: Any = None
        self._printing: dict[bytes, tuple[Any, Any, Any]] = {}

    def _ready(self) -> Any:
        """numpy, and the arrays made with it (once)."""
        if self._np is not None:
            return self._np
        import numpy as np

        encoded, count = self._encoded, len(self._encoded)
        padded = b"".join(e.ljust(8 * self.words, b"\0") for e in encoded) + b"\0" * 8 * self.words
        keys = np.frombuffer(padded, dtype="<u8").reshape(count + 1, self.words)  # row `count`: no token
        self._keys = np.ascontiguousarray(keys[:, 0])
        self._rest = np.ascontiguousarray(keys[:, 1:])
        self._length = np.array([len(e) for e in encoded] + [-1], dtype=np.int64)
        self._slot, self._multiplier, self._shift = _perfect_hash(np, self._keys[:count])
        # A key word keeps the bytes of a token's length: masks by bytes left (0-8).
        self._mask = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
        self._seen = np.array(self._seen_flags, dtype=bool)
        self._np = np
        return np

    def _printed_items(self, sep: bytes) -> tuple[Any, Any, Any]:
        """What is printed per output token: followed by `sep` (rows 0..count-1), or by
        the newline as the last of its word (rows count..2 count-1): the bytes, each
        row's length and first byte."""
        if sep not in self._printing:
            np = self._np
            items = [e + s for s in (sep, b"\n") for e in self._encoded]
            length = np.array([len(e) for e in items], dtype=np.int32)
            first = np.zeros(len(items), dtype=np.int32)
            np.cumsum(length[:-1], out=first[1:])
            self._printing[sep] = (np.frombuffer(b"".join(items), dtype=np.uint8), length, first)
        return self._printing[sep]

    def apply_block(self, data: bytes, sep: bytes) -> tuple[bytes, list[int]] | None:
        """See the module docstring."""
        if not self.usable or not data.endswith(b"\n"):
            return None
        np = self._ready()
        lines = data.count(b"\n")
        raw = np.frombuffer(data, dtype=np.uint8)
        counts = np.bincount(raw, minlength=256)
        if counts.take(_DECLINED_BYTES).any():
            return None
        if counts.take(_SPACE_LEADS).any() and any(c in data.decode("utf-8") for c in OTHER_SPACE):
            return None
        # (Gathers are `take`s and cumulative sums are given their type: numpy's
        # fancy indexing with int32 indices, and cumsum's default int64 for smaller
        # types, are 2-4 times slower on a block's arrays.)
        ends = np.flatnonzero((raw == 0x20) | (raw == 0x0A))  # the byte after each token
        newline = raw.take(ends) == 0x0A
        starts = np.empty_like(ends)
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
        lengths = ends - starts
        word_of = np.cumsum(newline, dtype=np.int64)  # the line each token is on
        word_of -= newline
        if not lengths.all():
            # An empty token is an empty line (between two newlines, or a newline
            # first); any other (two spaces, a space at a line's start or end) is
            # spacing that str.split reads but this walker does not.
            empty = lengths == 0
            after_newline = np.ones(len(ends), dtype=bool)
            after_newline[1:] = newline[:-1]
            if (empty & ~(newline & after_newline)).any():
                return None
            keep = ~empty  # empty lines: no token, an empty word
            starts, lengths, word_of = starts[keep], lengths[keep], word_of[keep]
        ids = self._lookup(data, starts, lengths)
        per_line = np.bincount(word_of, minlength=lines)
        if lines and int(per_line.max()) > LONG_WORD:
            return None  # a word this long is walked alone (`Tables.outputs`)
        fix: list[int] = []
        seen = self._seen.take(ids)
        if not seen.all():
            # (Not np.unique: it imports numpy.ma, a twentieth of a second of start-up.)
            odd = np.array(sorted(set(word_of[~seen].tolist())), dtype=np.int64)
            if (per_line.take(odd) == 1).any():
                return None  # an unspaced word the alphabet does not know: the caller splits it
            fix = odd.tolist()
        word_starts = np.zeros(lines + 1, dtype=np.int64)
        np.cumsum(per_line, out=word_starts[1:])
        out, out_starts = self._tables.walk_ids(ids, word_starts)
        return self._printed(out, out_starts, sep), fix

    def _lookup(self, data: bytes, starts: "np.ndarray", lengths: "np.ndarray") -> "np.ndarray":
        """Token indices of the tokens at `starts` (`lengths` bytes each); UNK's where
        the tables have no such token."""
        np = self._np
        padded = data + b"\0" * (8 * self.words)
        view = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
        mask = self._mask
        key = view.take(starts)
        key &= mask.take(np.minimum(lengths, 8))
        at = self._slot.take((key * self._multiplier) >> self._shift)
        hit = self._keys.take(at) == key
        hit &= self._length.take(at) == lengths
        for w in range(1, self.words):
            rest = view.take(starts + 8 * w) & mask.take(np.clip(lengths - 8 * w, 0, 8))
            hit &= self._rest[:, w - 1].take(at) == rest
        return np.where(hit, at, self._tables.unk).astype(np.int32)

    def _printed(self, out: "np.ndarray", out_starts: "np.ndarray", sep: bytes) -> bytes:
        """The outputs as printed: tokens joined by `sep`, a newline after each word."""
        np = self._np
        out_bytes, out_len, out_first = self._printed_items(sep)
        sizes = np.diff(out_starts)
        item = out.copy()
        item[out_starts[1:][sizes > 0] - 1] += len(self._encoded)  # the last of its word
        from fstsynth.batch_walker import concat_ranges  # (numpy's path only: kept off apply's start-up)

        at, bounds = concat_ranges(np, out_first.take(item), out_len.take(item))
        printed = out_bytes.take(at)
        if not sizes.all():  # an empty word: a newline alone
            printed = np.insert(printed, bounds[out_starts[:-1][sizes == 0]], 0x0A)
        return bytes(printed.tobytes())


def _perfect_hash(np: Any, keys: "np.ndarray") -> tuple["np.ndarray", "np.uint64", "np.uint64"]:
    """A slot table for `keys` (distinct uint64): `slot[(key * multiplier) >> shift]`
    is the index of `key` among them, for every key of them (other keys land anywhere,
    on `len(keys)` for an empty slot). Multipliers are tried from a fixed sequence,
    in tables of growing size, until no two keys share a slot."""
    count = len(keys)
    bits = max(4, count.bit_length() + 2)
    candidate = 0x9E3779B97F4A7C15  # odd multipliers: Weyl steps of the golden ratio
    while True:
        for _ in range(64):
            candidate = (candidate + 0x9E3779B97F4A7C16) % (1 << 64) | 1
            multiplier, shift = np.uint64(candidate), np.uint64(64 - bits)
            slots = (keys * multiplier) >> shift
            if len(set(slots.tolist())) == count:
                table = np.full(1 << bits, count, dtype=np.int32)
                table[slots] = np.arange(count, dtype=np.int32)
                return table, multiplier, shift
        bits += 1

"""Streaming: lines in, in batches, so that applying a model to any input takes memory
bounded by a batch and writes its first outputs before the input has ended.

Public API:
    line_batches(stream, *, chunk=CHUNK_BYTES, name="<stdin>") -> Iterator[list[str]]
    blocks(stream, *, chunk=CHUNK_BYTES, on_read=None) -> Iterator[Block]; Block.lines(name) -> list[str]
    ByteApplier(model, alphabet, sep), ByteApplier.apply(block) -> Applied | None
    CompiledApplier(model, alphabet, sep, walker), CompiledApplier.apply(block) -> Applied | None
    byte_applier(model, alphabet, sep, encoding) -> CompiledApplier | ByteApplier | None
    words_of(lines, split) -> list[Word]
    predict_batches(pair_model, batches, split) -> Iterator[Predicted]
    Predicted, CHUNK_BYTES

A batch is the complete lines of what the stream has ready, up to about `chunk` bytes:
a file or a fast pipe gives batches of thousands of lines (what the numpy walker needs
to be fast), a slow pipe one line at a time as it comes (so an interactive user sees
each answer at once). A line longer than a chunk is read whole, however long.

`predict_batches` is the engine of `fstsynth apply`: per batch, the words (tokens
separated by spaces are split by `str.split`; an unspaced word by the caller's
`split`), and the model's predictions for them, through the apply tables a batch at a
time (`fstsynth.tables`); a line repeated within a batch is predicted once.

`ByteApplier` is the same for the common case, without a Python object per token: a
block of plain lines (tokens separated by single spaces, nothing else to read into)
goes from its UTF-8 bytes to token indices, through the tables' batch walker, and back
to the UTF-8 bytes printed, in numpy array operations; any other block (comments, tabs,
CRs, unspaced words, unseen tokens in a one-token line, words too long for a batch) it
declines, and the line path above reads it. Both print the same bytes.

`CompiledApplier` reads the same blocks the same way with the compiled walker
(`fstsynth._walk`, C, optional: `Tables.compiled`): no numpy at all, so a command on a
file of words starts as fast as on one word. `byte_applier` picks it where it is built.
"""

from __future__ import annotations

import functools
import unicodedata
from collections import Counter
from itertools import chain
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Container, Iterable, Iterator, Sequence

from fstsynth.errors import UserError
from fstsynth.tables import LONG_WORD, concat_ranges
from fstsynth.tables import Error as TablesError
from fstsynth.types import Token, Word

if TYPE_CHECKING:
    import numpy as np

    from fstsynth import _walk

    from fstsynth.model import PairModel

#: Bytes read from the stream at a time (at most; fewer if fewer are ready): enough
#: words per batch for the numpy walker to run near its best.
CHUNK_BYTES = 1 << 18


class Block:
    """Complete lines as read (`data`: UTF-8 bytes ending with a newline); `line`: the
    number of lines before them in the stream; `first`: the stream's first block."""

    __slots__ = ("data", "line", "first")

    def __init__(self, data: bytes, line: int, first: bool) -> None:
        self.data, self.line, self.first = data, line, first

    def lines(self, name: str = "<stdin>") -> list[str]:
        """The lines as text (see `line_batches`)."""
        return _decode(self.data, self.line, name, self.first)


def blocks(
    stream: BinaryIO, *, chunk: int = CHUNK_BYTES, on_read: Callable[[int], None] | None = None
) -> Iterator[Block]:
    """The complete lines of a byte stream, a block at a time (see the module
    docstring); a last line without a newline gets one. `on_read`: called after each
    read with the number of bytes read so far."""
    read = getattr(stream, "read1", stream.read)
    pending: list[bytes] = []  # the start of a line longer than what was read so far
    lines_before = 0
    first = True
    total = 0
    while True:
        data = read(chunk)
        if not data:
            break
        if on_read is not None:
            total += len(data)
            on_read(total)
        end = data.rfind(b"\n")
        if end < 0:
            pending.append(data)
            continue
        block = b"".join([*pending, data[: end + 1]]) if pending else data[: end + 1]
        pending = [data[end + 1 :]] if end + 1 < len(data) else []
        yield Block(block, lines_before, first)
        first = False
        lines_before += block.count(b"\n")
    if pending:
        yield Block(b"".join(pending) + b"\n", lines_before, first)


def line_batches(stream: BinaryIO, *, chunk: int = CHUNK_BYTES, name: str = "<stdin>") -> Iterator[list[str]]:
    """The lines of a UTF-8 byte stream, in batches (see the module docstring).

    Only `\\n` ends a line (a trailing `\\r` is dropped: CRLF files read like LF ones;
    `str.splitlines` would also split at `\\x1c`, `\\u2028`, ...); a byte-order mark at
    the start is dropped. Bytes that are not UTF-8 raise UserError naming the line.
    """
    for block in blocks(stream, chunk=chunk):
        yield block.lines(name)


def _decode(block: bytes, lines_before: int, name: str, first: bool) -> list[str]:
    """Complete lines (`block` ends with a newline) as text."""
    try:
        text = block.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as exc:
        line = lines_before + block[: exc.start].count(b"\n") + 1
        raise UserError(f"{name}: line {line}: not valid UTF-8") from None
    lines = text.split("\n")
    lines.pop()  # after the last newline
    if "\r" not in text:
        return lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class Predicted:
    """One batch: the lines as read, their words, and the model's predictions for them
    (`predictions`, tuples, and `texts(sep)`, strings: what is printed; made on first
    use). A line repeated in a batch is read and predicted once: text repeats its common
    words again and again."""

    def __init__(self, model: "PairModel", lines: list[str], split: Callable[[str], Word]) -> None:
        self.lines = lines
        unique = list(dict.fromkeys(lines))
        self._picks: list[int] | None = None
        if len(unique) < len(lines):
            self._picks = list(map({line: k for k, line in enumerate(unique)}.__getitem__, lines))
        self._words = words_of(unique, split)
        self._model = model

    def _spread(self, values: list) -> list:
        return values if self._picks is None else [values[k] for k in self._picks]

    @functools.cached_property
    def words(self) -> list[Sequence[Token]]:
        return self._spread(self._words)

    @functools.cached_property
    def predictions(self) -> list[Word]:
        return self._spread(self._model.predict_many(self._words))

    def texts(self, sep: str = " ") -> list[str]:
        return self._spread(self._model.predict_texts(self._words, sep))

    def unseen(self, alphabet: Container[Token]) -> Counter:
        """Each token of the batch not in `alphabet`, with the number of lines it is in
        (one set of all tokens first: most batches have none)."""
        found: Counter = Counter()
        if all(tok in alphabet for tok in set(chain.from_iterable(self._words))):
            return found
        for word in self.words:
            found.update({tok for tok in word if tok not in alphabet})
        return found


def words_of(lines: list[str], split: Callable[[str], Word]) -> list[Sequence[Token]]:
    """The words of `lines`, NFC-normalized: a line with a space is its tokens
    separated by white space (a list); any other line (one unspaced word) is
    `split(line)`."""
    text = "\n".join(lines)
    if not unicodedata.is_normalized("NFC", text):
        lines = unicodedata.normalize("NFC", text).split("\n")
    words: list[Sequence[Token]] = list(map(str.split, lines))
    # A line of one field is an unspaced word; one of several fields with no space
    # between them (tabs, say) is too. Only such lines are looked at one by one.
    if 1 in map(len, words) or any(c in text for c in _OTHER_SPACE):
        for k, (part, line) in enumerate(zip(words, lines)):
            if len(part) == 1 or (len(part) > 1 and " " not in line):
                words[k] = split(line)
    return words


#: The white space `str.split` splits at, besides the space and the newline.
#: (Written out: computing it costs start-up time; tests/test_fast_apply.py checks it.)
_OTHER_SPACE = (
    "\t\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def predict_batches(
    model: "PairModel", batches: Iterable[list[str]], split: Callable[[str], Word]
) -> Iterator[Predicted]:
    """Each batch of lines with its words and `model`'s predictions, one batch at a time."""
    for lines in batches:
        yield Predicted(model, lines, split)


#: Bytes a block the byte path reads never has: tab, `#`, CR and the other ASCII white
#: space but the space and the newline (`_OTHER_SPACE`'s); and the first bytes of the
#: UTF-8 of its other characters (a block with any of these is looked at as text).
_DECLINED_BYTES = sorted({ord(c) for c in _OTHER_SPACE if c.isascii()} | {ord("#")})
_SPACE_LEADS = sorted({c.encode("utf-8")[0] for c in _OTHER_SPACE if not c.isascii()})

#: A block with fewer lines than this goes by the line path (numpy's set-up costs more).
MIN_BYTE_LINES = 64
#: The byte path packs a token's UTF-8 bytes into 64-bit words, at most this many.
KEY_WORDS = 4
_ENCODING_NAMES = ("utf-8", "utf8")


class Applied:
    """What `ByteApplier.apply` made of a block: the bytes to print, and the unseen
    tokens with the number of lines they are in (as `Predicted.unseen`)."""

    __slots__ = ("data", "unseen")

    def __init__(self, data: bytes, unseen: Counter) -> None:
        self.data, self.unseen = data, unseen


class ByteApplier:
    """`fstsynth apply`'s fast path (plain output, one prediction per line, tokens
    joined by `sep`): see the module docstring. Made once per command; numpy is
    imported when the first block it reads comes.

    Token lookup without Python objects: a token's first 8 UTF-8 bytes, read as a
    little-endian 64-bit word straight from the block (an unaligned view of it), are
    its key; a multiplicative hash of the key (chosen so that the model's tokens fall
    in distinct slots) finds the one model token it can be, which is then checked on
    its key, its length and its later bytes. A model whose tokens cannot be told apart
    by their first 8 bytes, or are longer than KEY_WORDS words, or hold a NUL or white
    space, is not read this way (`usable` is False)."""

    def __init__(self, model: "PairModel", alphabet: Container[Token], sep: str) -> None:
        self._model = model
        self._alphabet = alphabet
        self._sep = sep
        self._tables = model.tables
        tokens = self._tables.tokens
        self._encoded = [t.encode("utf-8") for t in tokens]
        self.words = max([1] + [(len(e) + 7) // 8 for e in self._encoded])
        self.usable = (
            self.words <= KEY_WORDS
            and _plain_tokens(tokens)
            and not any(b"\0" in e for e in self._encoded)
            and len({e[:8] for e in self._encoded}) == len(self._encoded)
        )
        self._np: Any = None

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
        tokens = self._tables.tokens
        self._seen = np.array([t in self._alphabet for t in tokens], dtype=bool)
        # What is printed per output token: followed by `sep` (rows 0..count-1), or
        # by the newline as the last of its word (rows count..2 count-1).
        sep = self._sep.encode("utf-8")
        items = [e + sep for e in encoded] + [e + b"\n" for e in encoded]
        self._out_bytes = np.frombuffer(b"".join(items), dtype=np.uint8)
        self._out_len = np.array([len(e) for e in items], dtype=np.int32)
        self._out_first = np.zeros(len(items), dtype=np.int32)
        np.cumsum(self._out_len[:-1], out=self._out_first[1:])
        self._np = np
        return np

    def apply(self, block: Block) -> Applied | None:
        """The printed predictions of a block's lines, or None if the block is not one
        this path reads (the line path then does)."""
        data = block.data
        lines = data.count(b"\n")
        if not self.usable or lines < MIN_BYTE_LINES:
            return None
        if block.first and data.startswith(b"\xef\xbb\xbf"):
            return None  # a byte-order mark: the line path
        np = self._ready()
        raw = np.frombuffer(data, dtype=np.uint8)
        # What the line path reads differently, from one count of every byte value:
        # tabs, comments, CRs and the other ASCII white space; beyond ASCII, text that
        # is not UTF-8 (the line path names the line), not NFC, or has white space
        # other than the space and the newline.
        counts = np.bincount(raw, minlength=256)
        if counts.take(_DECLINED_BYTES).any():
            return None
        text = None
        if counts[0x80:].any():
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return None
            if not unicodedata.is_normalized("NFC", text):
                return None
            if counts.take(_SPACE_LEADS).any() and any(c in text for c in _OTHER_SPACE):
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
            # spacing that str.split reads but this path does not.
            empty = lengths == 0
            after_newline = np.ones(len(ends), dtype=bool)
            after_newline[1:] = newline[:-1]
            if (empty & ~(newline & after_newline)).any():
                return None
            keep = ~empty  # empty lines: no token, an empty word
            starts, lengths, word_of = starts[keep], lengths[keep], word_of[keep]
        ids = self._lookup(data, starts, lengths)
        counts = np.bincount(word_of, minlength=lines)
        if int(counts.max()) > LONG_WORD:
            return None  # a word this long is walked alone (`Tables.outputs`)
        fix: list[int] = []
        unseen: Counter = Counter()
        seen = self._seen.take(ids)
        if not seen.all():
            odd = np.array(sorted(set(word_of[~seen].tolist())), dtype=np.int64)
            if (counts[odd] == 1).any():
                return None  # an unspaced word the alphabet does not know: the line path splits it
            fix = odd.tolist()
        word_starts = np.zeros(lines + 1, dtype=np.int64)
        np.cumsum(counts, out=word_starts[1:])
        try:
            out, out_starts = self._tables.walk_ids(ids, word_starts)
        except TablesError as exc:
            from fstsynth.model import Error as ModelError

            raise ModelError(f"{self._model.far_key}: {exc}: the model is damaged") from None
        printed = self._printed(out, out_starts)
        if not fix:
            return Applied(printed, unseen)
        if text is None:
            text = data.decode("utf-8")  # ASCII
        return Applied(self._fixed(text, printed, out, out_starts, fix, unseen), unseen)

    def _lookup(self, data: bytes, starts: "np.ndarray", lengths: "np.ndarray") -> "np.ndarray":
        """Token indices of the tokens at `starts` (`lengths` bytes each); UNK's where
        the model has no such token."""
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

    def _printed(self, out: "np.ndarray", out_starts: "np.ndarray") -> bytes:
        """The outputs as printed: tokens joined by `sep`, a newline after each word."""
        np = self._np
        sizes = np.diff(out_starts)
        item = out.copy()
        item[out_starts[1:][sizes > 0] - 1] += len(self._tables.tokens)  # the last of its word
        at, bounds = concat_ranges(np, self._out_first.take(item), self._out_len.take(item))
        printed = self._out_bytes.take(at)
        if not sizes.all():  # an empty word: a newline alone
            printed = np.insert(printed, bounds[out_starts[:-1][sizes == 0]], 0x0A)
        return printed.tobytes()

    def _fixed(
        self, text: str, printed: bytes, out: "np.ndarray", out_starts: "np.ndarray", fix: list[int], unseen: Counter
    ) -> bytes:
        """`printed` with the lines of words holding unseen tokens made again as the line
        path makes them (unseen tokens put back: `model.restore_unknown`), and those
        tokens counted in `unseen`."""
        from fstsynth.model import restore_unknown

        lines = text.split("\n")
        printed_lines = printed.split(b"\n")
        tokens = self._tables.tokens
        for k in fix:
            word = lines[k].split()
            unseen.update({tok for tok in word if tok not in self._alphabet})
            output = tuple(tokens[i] for i in out[out_starts[k] : out_starts[k + 1]].tolist())
            restored = restore_unknown(word, self._model.map_unknown(word), output)
            printed_lines[k] = self._sep.join(restored).encode("utf-8")
        return b"\n".join(printed_lines)


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


class CompiledApplier:
    """`ByteApplier` with the compiled walker `walker` (`Tables.compiled`): the same
    blocks declined, the same bytes printed. The walker reads a block's lines, looks
    their tokens up, walks the passes and writes the outputs; here are the checks it
    leaves to Python (UTF-8 and NFC: the standard library's), and the lines with unseen
    tokens (rare), written again as the line path writes them."""

    def __init__(self, model: "PairModel", alphabet: Container[Token], sep: str, walker: "_walk.Walker") -> None:
        self._model = model
        self._alphabet = alphabet
        self._sep = sep
        self._walker = walker

    def apply(self, block: Block) -> Applied | None:
        """The printed predictions of a block's lines, or None if the line path reads it."""
        data = block.data
        if block.first and data.startswith(b"\xef\xbb\xbf"):
            return None  # a byte-order mark: the line path
        text = None
        if not data.isascii():
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return None  # the line path names the line
            if not unicodedata.is_normalized("NFC", text):
                return None
        try:
            done = self._walker.apply_block(data, self._sep.encode("utf-8"))
        except ValueError as exc:
            from fstsynth.model import Error as ModelError

            raise ModelError(f"{self._model.far_key}: {exc}: the model is damaged") from None
        if done is None:
            return None
        printed, fix = done
        unseen: Counter = Counter()
        if fix:
            if text is None:
                text = data.decode("utf-8")  # ASCII
            lines, printed_lines = text.split("\n"), printed.split(b"\n")
            for k in fix:
                word = lines[k].split()
                unseen.update({tok for tok in word if tok not in self._alphabet})
                printed_lines[k] = self._sep.join(self._model.predict(word)).encode("utf-8")
            printed = b"\n".join(printed_lines)
        return Applied(printed, unseen)


def _plain_tokens(tokens: Sequence[Token]) -> bool:
    """Whether every token can be read from bytes between single spaces: none is empty
    or holds white space (both byte paths need it)."""
    return all(t and not any(c.isspace() for c in t) for t in tokens)


def byte_applier(
    model: "PairModel", alphabet: Container[Token], sep: str, encoding: str
) -> CompiledApplier | ByteApplier | None:
    """The fast path of plain output, if the output `encoding` and the model's tokens
    allow one: the compiled walker's where it is built, else numpy's."""
    if encoding.lower().replace("_", "-") not in _ENCODING_NAMES:
        return None
    tokens = model.tables.tokens
    if _plain_tokens(tokens):
        walker = model.tables.compiled([t in alphabet for t in tokens])
        if walker is not None:
            return CompiledApplier(model, alphabet, sep, walker)
    applier = ByteApplier(model, alphabet, sep)
    return applier if applier.usable else None

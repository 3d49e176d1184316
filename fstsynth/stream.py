"""Streaming: lines in, in batches, so that applying a model to any input takes memory
bounded by a batch and writes its first outputs before the input has ended.

Public API:
    line_batches(stream, *, chunk=CHUNK_BYTES, name="<stdin>") -> Iterator[list[str]]
    blocks(stream, *, chunk=CHUNK_BYTES, on_read=None) -> Iterator[Block]; Block.lines(name) -> list[str]
    file_block(fd, start, begin, end, *, chunk=CHUNK_BYTES) -> Block   (a regular file's lines by offsets)
    LineError (bad input on a line; `shifted(lines)`)
    ByteApplier(model, alphabet, sep, walker, min_lines=0), ByteApplier.apply(block) -> Applied | None
    byte_applier(model, alphabet, sep, encoding, walker=None) -> ByteApplier | None
    BlockApplier(model, alphabet, sep, fmt, encoding, split), BlockApplier.apply(block) -> Applied
    source_lines(lines, first) -> (words, tab_line)
    BLOCK_WALKERS, MIN_BYTE_LINES
    words_of(lines, split) -> (list[Word], blank)
    predict_batches(pair_model, batches, split) -> Iterator[Predicted]
    lazy_splitter(alphabet) -> split   (`problem.WordSplitter`, made when first needed)
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
goes from its UTF-8 bytes to token indices, through the passes, and back to the UTF-8
bytes printed, by a block walker: the compiled one (`fstsynth._walk`, C, optional:
`Tables.compiled`; no numpy at all, so a command on a file of words starts as fast as
on one word) where it is built, else numpy's (`fstsynth.block_walker`). Any other
block (comments, tabs, CRs, unspaced words, unseen tokens in a one-token line) the
walker declines, and the line path above reads it. Both paths print the same bytes.
"""

from __future__ import annotations

import functools
import os
import unicodedata
from collections import Counter
from itertools import chain
from typing import TYPE_CHECKING, BinaryIO, Callable, Container, Iterable, Iterator, Protocol, Sequence

from fstsynth.block_walker import OTHER_SPACE, NumpyBlockWalker, plain_tokens
from fstsynth.errors import UserError
from fstsynth.tables import Error as TablesError
from fstsynth.types import Token, Word

if TYPE_CHECKING:
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


def file_block(fd: int, start: int, begin: int, end: int, *, chunk: int = CHUNK_BYTES) -> Block:
    """The complete lines of a regular file (`fd`, read with `os.pread`: its offset does
    not move) that start at an offset in [begin, end), lines counted from offset
    `start` (where reading the file began, the first block's `begin`), as a block whose
    `line` is 0: the lines before it are not counted here. Blocks of consecutive
    ranges hold every line once, as `blocks` reads them; a line longer than the range
    is read whole (by the block it starts in; the next ones are then empty). A last
    line without a newline gets one."""
    first = begin <= start
    if first:
        data = os.pread(fd, end - begin, begin)
    else:
        # A line starts at `begin` only if the byte before it ends one.
        data = os.pread(fd, end - begin + 1, begin - 1)
        cut = data.find(b"\n")
        if cut < 0 or cut >= end - begin:
            return Block(b"", 0, False)
        begin, data = begin + cut, data[cut + 1 :]
    if data and not data.endswith(b"\n"):
        # The last line goes on past `end` (or ends the file without a newline).
        parts = [data]
        offset = begin + len(data)
        while True:
            more = os.pread(fd, chunk, offset)
            cut = more.find(b"\n")
            if not more or cut >= 0:
                parts.append(more[: cut + 1] if more else b"\n")
                break
            parts.append(more)
            offset += len(more)
        data = b"".join(parts)
    return Block(data, 0, first)


def line_batches(stream: BinaryIO, *, chunk: int = CHUNK_BYTES, name: str = "<stdin>") -> Iterator[list[str]]:
    """The lines of a UTF-8 byte stream, in batches (see the module docstring).

    Only `\\n` ends a line (a trailing `\\r` is dropped: CRLF files read like LF ones;
    `str.splitlines` would also split at `\\x1c`, `\\u2028`, ...); a byte-order mark at
    the start is dropped. Bytes that are not UTF-8 raise UserError naming the line.
    """
    for block in blocks(stream, chunk=chunk):
        yield block.lines(name)


class LineError(UserError):
    """Bad input on a line of a stream (`line`, numbered from 1): `name: line N: what`.
    A worker that read a block without knowing the lines before it raises it numbered
    within the block; the process that knows them moves it (`shifted`)."""

    def __init__(self, name: str, line: int, what: str) -> None:
        super().__init__(f"{name}: line {line}: {what}")
        self.name, self.line, self.what = name, line, what

    def __reduce__(self) -> tuple[type, tuple[str, int, str]]:
        return type(self), (self.name, self.line, self.what)  # (raised in a worker process)

    def shifted(self, lines: int) -> "LineError":
        """The same error with `lines` more lines before it."""
        return LineError(self.name, self.line + lines, self.what)


def _decode(block: bytes, lines_before: int, name: str, first: bool) -> list[str]:
    """Complete lines (`block` ends with a newline) as text."""
    try:
        text = block.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as exc:
        line = lines_before + block[: exc.start].count(b"\n") + 1
        raise LineError(name, line, "not valid UTF-8") from None
    lines = text.split("\n")
    lines.pop()  # after the last newline
    if "\r" not in text:
        return lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class Predicted:
    """One batch: the lines as read, their words, and the model's predictions for them
    (`predictions`, tuples, and `texts(sep)`, strings: what is printed; made on first
    use). A line repeated in a batch is read and predicted once: text repeats its common
    words again and again.

    A blank line (or one of white space only) prints a blank line, whatever the model
    writes for the empty word.
    """

    def __init__(self, model: "PairModel", lines: list[str], split: Callable[[str], Word]) -> None:
        self.lines = lines
        unique = list(dict.fromkeys(lines))
        self._picks: list[int] | None = None
        if len(unique) < len(lines):
            self._picks = list(map({line: k for k, line in enumerate(unique)}.__getitem__, lines))
        self._words, self._blank = words_of(unique, split)
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
        """The predictions as printed: their tokens joined by `sep`; blank lines blank."""
        texts = self._model.predict_texts(self._words, sep)
        for k in self._blank:
            texts[k] = ""
        return self._spread(texts)

    def unseen(self, alphabet: Container[Token]) -> Counter:
        """Each token of the batch not in `alphabet`, with the number of lines it is in
        (one set of all tokens first: most batches have none)."""
        found: Counter = Counter()
        if all(tok in alphabet for tok in set(chain.from_iterable(self._words))):
            return found
        for word in self.words:
            found.update({tok for tok in word if tok not in alphabet})
        return found


def words_of(lines: list[str], split: Callable[[str], Word]) -> tuple[list[Sequence[Token]], list[int]]:
    """The words of `lines`, NFC-normalized: a line with a space is its tokens
    separated by white space (a list); any other line (one unspaced word) is
    `split(line)`. And the blank lines (white space only), by index."""
    text = "\n".join(lines)
    if not unicodedata.is_normalized("NFC", text):
        lines = unicodedata.normalize("NFC", text).split("\n")
    words: list[Sequence[Token]] = list(map(str.split, lines))
    fields = list(map(len, words))
    # A line of one field is an unspaced word; one of several fields with no space
    # between them (tabs, say) is too. Only such lines are looked at one by one.
    if 1 in fields or any(c in text for c in OTHER_SPACE):
        for k, (part, line) in enumerate(zip(words, lines)):
            if len(part) == 1 or (len(part) > 1 and " " not in line):
                words[k] = split(line)
    return words, ([k for k, n in enumerate(fields) if n == 0] if 0 in fields else [])


def predict_batches(
    model: "PairModel", batches: Iterable[list[str]], split: Callable[[str], Word]
) -> Iterator[Predicted]:
    """Each batch of lines with its words and `model`'s predictions, one batch at a time."""
    for lines in batches:
        yield Predicted(model, lines, split)


#: A block with fewer lines than this goes by the line path when numpy walks the blocks
#: (its set-up costs more).
MIN_BYTE_LINES = 64
_ENCODING_NAMES = ("utf-8", "utf8")
#: The block walkers `byte_applier` can be asked for: fstsynth/_walk.c's
#: `Walker.apply_block`, and `fstsynth.block_walker.NumpyBlockWalker`'s.
BLOCK_WALKERS = ("compiled", "numpy")


class Applied:
    """What was made of a block: the bytes to print (`data`; or, from the line path,
    `text`, printed through the output stream's own encoding; "" for nothing), the
    unseen tokens with the number of lines they are in (as `Predicted.unseen`), and the
    first line with a tab (`tab_line`, numbered from 1 in the stream; None for none)."""

    __slots__ = ("data", "unseen", "text", "tab_line")

    def __init__(self, data: bytes, unseen: Counter, text: str = "", tab_line: int | None = None) -> None:
        self.data, self.unseen, self.text, self.tab_line = data, unseen, text, tab_line


class BlockWalker(Protocol):
    """What walks a block of plain lines (see `fstsynth.block_walker`'s docstring)."""

    def apply_block(self, data: bytes, sep: bytes) -> tuple[bytes, list[int]] | None: ...


class ByteApplier:
    """`fstsynth apply`'s fast path (plain output, one prediction per line, tokens
    joined by `sep`): see the module docstring. A block walker (`walker`: the compiled
    one, or numpy's) reads a block's lines, looks their tokens up, walks the passes and
    writes the outputs; here are the checks it leaves to Python (UTF-8 and NFC: the
    standard library's), and the lines with unseen tokens, written again as the line
    path writes them (`model.predict`: unseen tokens put back)."""

    def __init__(
        self, model: "PairModel", alphabet: Container[Token], sep: str, walker: BlockWalker, min_lines: int = 0
    ) -> None:
        self._model = model
        self._alphabet = alphabet
        self._sep = sep
        self._walker = walker
        self._min_lines = min_lines

    def apply(self, block: Block) -> Applied | None:
        """The printed predictions of a block's lines, or None if the line path reads it."""
        data = block.data
        if self._min_lines and data.count(b"\n") < self._min_lines:
            return None
        if block.first and data.startswith(b"\xef\xbb\xbf"):
            return None  # a byte-order mark: the line path
        if not data.isascii():
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return None  # the line path names the line
            if not unicodedata.is_normalized("NFC", text):
                return None
        try:
            done = self._walker.apply_block(data, self._sep.encode("utf-8"))
        except (ValueError, TablesError) as exc:
            from fstsynth.model import Error as ModelError

            raise ModelError(f"{self._model.far_key}: {exc}: the model is damaged") from None
        if done is None:
            return None
        printed, fix = done
        unseen: Counter = Counter()
        blank = data.startswith(b"\n") or b"\n\n" in data
        if fix or blank:
            lines, printed_lines = data.decode("utf-8").split("\n"), printed.split(b"\n")
            for k in fix:
                word = lines[k].split()
                unseen.update({tok for tok in word if tok not in self._alphabet})
                printed_lines[k] = self._sep.join(self._model.predict(word)).encode("utf-8")
            if blank:  # a blank line stays blank (the walkers print the empty word's output)
                for k in [k for k, line in enumerate(lines[:-1]) if not line]:
                    printed_lines[k] = b""
            printed = b"\n".join(printed_lines)
        return Applied(printed, unseen)


def byte_applier(
    model: "PairModel", alphabet: Container[Token], sep: str, encoding: str, walker: str | None = None
) -> ByteApplier | None:
    """The fast path of plain output, if the output `encoding` and the model's tokens
    allow one: over the compiled walker where it is built, else numpy's (`walker`: one
    of BLOCK_WALKERS, or None for that choice)."""
    if encoding.lower().replace("_", "-") not in _ENCODING_NAMES:
        return None
    tables = model.tables
    seen = [t in alphabet for t in tables.tokens]
    if walker not in (None, *BLOCK_WALKERS):
        raise ValueError(f"no block walker {walker!r}; one of {', '.join(BLOCK_WALKERS)}")
    if walker in (None, "compiled") and plain_tokens(tables.tokens):
        compiled = tables.compiled(seen)
        if compiled is not None:
            return ByteApplier(model, alphabet, sep, compiled)
    if walker == "compiled":
        return None
    numpy_walker = NumpyBlockWalker(tables, seen)
    return ByteApplier(model, alphabet, sep, numpy_walker, MIN_BYTE_LINES) if numpy_walker.usable else None


def source_lines(lines: list[str], first: int) -> tuple[list[str], int | None]:
    """The words of lines read from a stream (`first`: the number of the first line,
    from 1): a line starting with `#` is a comment, as in a TSV (skipped); of a TSV line,
    `source<TAB>target`, the source is the word. And the number of the first line with
    a tab (None: none)."""
    text = "\n".join(lines)
    if "\t" not in text and "#" not in text:
        return lines, None
    words, tab_line = [], None
    for n, line in enumerate(lines, start=first):
        if line.lstrip().startswith("#"):
            continue
        if "\t" in line:
            if tab_line is None:
                tab_line = n
            line = line.split("\t", 1)[0]
        words.append(line)
    return words, tab_line


class BlockApplier:
    """`fstsynth apply`'s work on one block of its input, without the trace and the
    check: the bytes (or text) printed for the block's lines, in `fmt` ("plain": the
    predictions; "tsv": word<TAB>prediction), tokens joined by `sep`; by the byte path
    where it reads the block, else the line path. Blocks are independent: any process
    holding the same model prints the same for a block (`apply --jobs`, and a cluster's
    workers, map blocks with it)."""

    def __init__(
        self, model: "PairModel", alphabet: Container[Token], sep: str, fmt: str, encoding: str,
        split: Callable[[str], Word], name: str = "<stdin>",
    ) -> None:
        self._model, self._alphabet, self._sep, self._fmt = model, alphabet, sep, fmt
        self._split, self._name = split, name
        self._fast = byte_applier(model, alphabet, sep, encoding) if fmt == "plain" else None

    def apply(self, block: Block) -> Applied:
        if self._fast is not None:
            done = self._fast.apply(block)
            if done is not None:
                return done
        words, tab_line = source_lines(block.lines(self._name), block.line + 1)
        if not words:
            return Applied(b"", Counter(), "", tab_line)
        batch = Predicted(self._model, words, self._split)
        texts = batch.texts(self._sep)
        if self._fmt == "tsv":
            texts = [f"{line}\t{text}" for line, text in zip(batch.lines, texts)]
        return Applied(b"", batch.unseen(self._alphabet), "\n".join(texts) + "\n", tab_line)


def lazy_splitter(alphabet: set[str]) -> Callable[[str], tuple[str, ...]]:
    """`problem.WordSplitter` for `alphabet`, made when first needed (only unspaced
    words need it; importing `fstsynth.problem` costs start-up time)."""
    made: list[Callable[[str], tuple[str, ...]]] = []

    def split(text: str) -> tuple[str, ...]:
        if not made:
            from fstsynth.problem import WordSplitter

            made.append(WordSplitter(alphabet))
        return made[0](text)

    return split

"""Streaming: lines in, in batches, so that applying a model to any input takes memory
bounded by a batch and writes its first outputs before the input has ended.

Public API:
    line_batches(stream, *, chunk=CHUNK_BYTES, name="<stdin>") -> Iterator[list[str]]
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
"""

from __future__ import annotations

import functools
import unicodedata
from collections import Counter
from itertools import chain
from typing import TYPE_CHECKING, BinaryIO, Callable, Container, Iterable, Iterator, Sequence

from fstsynth.errors import UserError
from fstsynth.types import Token, Word

if TYPE_CHECKING:
    from fstsynth.model import PairModel

#: Bytes read from the stream at a time (at most; fewer if fewer are ready): enough
#: words per batch for the numpy walker to run near its best.
CHUNK_BYTES = 1 << 18


def line_batches(stream: BinaryIO, *, chunk: int = CHUNK_BYTES, name: str = "<stdin>") -> Iterator[list[str]]:
    """The lines of a UTF-8 byte stream, in batches (see the module docstring).

    Only `\\n` ends a line (a trailing `\\r` is dropped: CRLF files read like LF ones;
    `str.splitlines` would also split at `\\x1c`, `\\u2028`, ...); a byte-order mark at
    the start is dropped. Bytes that are not UTF-8 raise UserError naming the line.
    """
    read = getattr(stream, "read1", stream.read)
    pending = b""
    lines_before = 0
    first = True
    while True:
        data = read(chunk)
        if not data:
            break
        pending += data
        end = pending.rfind(b"\n")
        if end < 0:
            continue
        block, pending = pending[: end + 1], pending[end + 1 :]
        lines = _decode(block, lines_before, name, first)
        first = False
        lines_before += len(lines)
        yield lines
    if pending:
        yield _decode(pending + b"\n", lines_before, name, first)


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

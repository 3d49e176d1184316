"""`fstsynth.stream`: reading lines in blocks, and the byte path (`ByteApplier` over
each block walker) printing what the line path prints, unseen tokens included."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from collections import Counter

import pytest

from conftest import ROOT
from fstsynth.block_walker import OTHER_SPACE
from fstsynth.model import PairModel
from fstsynth.model_file import load_model
from fstsynth.problem import WordSplitter
from fstsynth.stream import (
    BLOCK_WALKERS,
    MIN_BYTE_LINES,
    Block,
    ByteApplier,
    LineError,
    blocks,
    byte_applier,
    file_block,
    predict_batches,
)
from test_fast_apply import _env
from test_fast_apply import plural_model as plural_model  # (a fixture)
from walkers import compiled_walker


def _applier(pm: PairModel, alphabet: set[str], sep: str, walker: str) -> ByteApplier:
    """The byte front end over `walker` (the compiled one: or a skip where it is not built)."""
    if walker == "compiled":
        compiled_walker(pm.tables, [True] * len(pm.tables.tokens))
    applier = byte_applier(pm, alphabet, sep, "utf-8", walker)
    assert applier is not None
    return applier


def test_the_other_white_space_is_what_str_split_splits_at():
    spaces = {c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()}
    assert set(OTHER_SPACE) == spaces - {" ", "\n"} and len(OTHER_SPACE) == len(set(OTHER_SPACE))


def test_line_batches_split_only_at_newlines():
    from fstsynth.stream import line_batches

    data = "\ufeffa b\r\nc\x1cd\n\ne f".encode()
    batches = list(line_batches(io.BytesIO(data), chunk=3))
    assert [line for batch in batches for line in batch] == ["a b", "c\x1cd", "", "e f"]
    assert all(batches)
    assert list(line_batches(io.BytesIO(b""))) == []
    doc = json.dumps({"x": 1})  # any text: one line without a final newline
    assert list(line_batches(io.BytesIO(doc.encode()))) == [[doc]]


@pytest.mark.parametrize("seed", range(6))
def test_file_blocks_of_consecutive_ranges_hold_every_line_once(tmp_path, seed):
    """A file cut at random offsets (ranges of 1 to 40 bytes, and lines longer than
    several ranges): the blocks of the ranges, joined, are the file's lines as `blocks`
    reads them (a last line without a newline gets one), from any starting offset; only
    the block at the start is the first."""
    rng = random.Random(seed)
    lines = ["x" * rng.choice([0, 1, 2, 5, 30, 90]) for _ in range(rng.randint(0, 40))]
    data = "\n".join(lines).encode() + (b"\n" if rng.random() < 0.5 else b"")
    path = tmp_path / "words.txt"
    path.write_bytes(data)
    with path.open("rb") as handle:
        fd = handle.fileno()
        for start in sorted({0, rng.randint(0, len(data)), len(data)}):
            cuts = [start]
            while cuts[-1] < len(data):
                cuts.append(min(len(data), cuts[-1] + rng.randint(1, 40)))
            got = [file_block(fd, start, a, b, chunk=7) for a, b in zip(cuts, cuts[1:])]
            expected = b"".join(b.data for b in blocks(io.BytesIO(data[start:]), chunk=7))
            assert b"".join(b.data for b in got) == expected
            assert [b.first for b in got] == [k == 0 for k in range(len(got))]
            assert all(b.line == 0 for b in got)
            assert handle.tell() == 0  # (pread: the file's offset does not move)


def test_a_line_error_is_moved_by_the_lines_before_it_and_survives_pickling():
    import pickle

    error = LineError("<stdin>", 3, "not valid UTF-8")
    moved = pickle.loads(pickle.dumps(error)).shifted(40)
    assert str(error) == "<stdin>: line 3: not valid UTF-8"
    assert str(moved) == "<stdin>: line 43: not valid UTF-8" and isinstance(moved, LineError)
    with pytest.raises(LineError, match="line 2: not valid UTF-8"):
        Block(b"ok\n\xff\n", 0, False).lines()



@pytest.mark.parametrize("walker", BLOCK_WALKERS)
@pytest.mark.parametrize("sep", [" ", ""])
def test_the_byte_path_prints_what_the_line_path_prints(plural_model, sep, walker):
    """Blocks of plain lines go from bytes to bytes (`stream.ByteApplier` over either
    block walker); the lines they print, and the unseen tokens they count, are the line
    path's. Empty lines, one-token lines and unseen tokens in longer lines stay on the
    byte path; blocks it cannot read as the line path does are declined."""
    model = load_model(plural_model)
    pm = model.pair()
    alphabet = set(model.alphabet)
    tokens = sorted(alphabet)
    rng = random.Random(7)
    lines = []
    for _ in range(600):
        word = [rng.choice(tokens) for _ in range(rng.randint(1, 9))]
        roll = rng.random()
        if roll < 0.05:
            lines.append("")
        elif roll < 0.12:
            word.insert(rng.randrange(len(word) + 1), rng.choice(["☃", "Q", "<unk>"]))
            lines.append(" ".join(word))
        elif roll < 0.2:
            lines.append(word[0])
        else:
            lines.append(" ".join(word))
    applier = _applier(pm, alphabet, sep, walker)
    got = applier.apply(Block(("\n".join(lines) + "\n").encode(), 0, True))
    assert got is not None, "the byte path declined plain lines"
    batch = next(predict_batches(pm, [lines], WordSplitter(alphabet)))
    assert got.data.decode().split("\n")[:-1] == batch.texts(sep)
    assert got.unseen == batch.unseen(alphabet) and got.unseen
    for odd in ("k a\tt", "# k a t", "k  a t", " k a t", "k a t ", "k a t\r", "☃", "k\u00a0a", "e\u0301 a",
                "k\x0ba", "k\x1fa", "k\u3000a", "k\u2028a", "k a \u1680"):
        block = Block(((odd + "\n") * MIN_BYTE_LINES).encode(), 0, True)
        assert applier.apply(block) is None, odd
        # The same line once among plain ones.
        block = Block((("k a t\n" * MIN_BYTE_LINES) + odd + "\nd ɔ g\n").encode(), 0, True)
        assert applier.apply(block) is None, odd
    assert applier.apply(Block(("\ufeffk a t\n" * MIN_BYTE_LINES).encode(), 0, True)) is None
    # Empty lines, first and last among them, stay on the byte path.
    assert applier.apply(Block(("\n" + "k a t\n\n" * MIN_BYTE_LINES).encode(), 0, True)) is not None


@pytest.mark.parametrize("walker", BLOCK_WALKERS)
def test_unseen_tokens_in_all_ascii_blocks_are_put_back_and_counted_by_lines(plural_model, walker):
    """All-ASCII input (no byte beyond 0x7f anywhere in the block) with unseen tokens
    of several kinds, several on one line and one repeated on a line: the lines are
    printed as the line path prints them (unseen tokens put back, never `<unk>`), and
    each token is counted once per line it is on, not per occurrence."""
    model = load_model(plural_model)
    pm = model.pair()
    alphabet = set(model.alphabet)
    plain = ["k a t", "t a k", "d a t"] * MIN_BYTE_LINES
    assert {t for line in plain for t in line.split()} <= alphabet
    odd = ["k a Q t", "Q a Q", "k zz a Q", "d a t zz zz Q", "k a t"]
    lines = plain + odd + plain
    data = ("\n".join(lines) + "\n").encode()
    assert data.isascii()
    got = _applier(pm, alphabet, " ", walker).apply(Block(data, 0, True))
    assert got is not None, "the byte path declined plain lines"
    printed = got.data.decode().split("\n")[:-1]
    assert printed == [" ".join(pm.predict(line.split())) for line in lines]
    assert "<unk>" not in got.data.decode()
    assert "Q" in printed[len(plain)] and printed[len(plain) + 1].count("Q") == 2
    assert got.unseen == Counter({"Q": 4, "zz": 2})
    batch = next(predict_batches(pm, [lines], WordSplitter(alphabet)))
    assert got.unseen == batch.unseen(alphabet)


def test_the_unseen_token_warning_counts_lines(plural_model):
    """Through the command (many lines of ASCII: the byte path), the warning names each
    unseen token with the number of lines it is on."""
    lines = ["k a t"] * 200 + ["k a Q Q", "Q d", "zz a zz", "k a t"] + ["d ɔ g"] * 10
    proc = subprocess.run(
        [sys.executable, "-m", "fstsynth", "apply", str(plural_model)],
        input="".join(f"{line}\n" for line in lines).encode(), capture_output=True, env=_env(), cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    pm = load_model(plural_model).pair()
    assert proc.stdout.decode().split("\n")[:-1] == [" ".join(pm.predict(line.split())) for line in lines]
    assert "<unk>" not in proc.stdout.decode()
    assert "Q (2 words), zz (1 word)" in proc.stderr.decode()

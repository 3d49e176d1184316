"""A pair n-gram WFST peer (Phonetisaurus), for benchmarking fstsynth side by side.

Public API:
    available() -> bool
    Error
    solve_with_pair_ngram(problem, order=5) -> dict[(row, column), Word]

This is the paper's WFST baseline (pair n-gram models, Novak et al.): one model per
column pair, trained on the rows where both cells are known, and to fill M[i][j] the
*first* column with a known cell in row i is the source (as the paper does). It needs
the optional `phonetisaurus` package (the `bench` extra), which ships the Phonetisaurus
and MITLM binaries; it is never needed to learn or apply fstsynth models.

Phonetisaurus reads the source side as a string of characters and the target side as
space-separated symbols, so every token (which may be several characters, like `t͡ʃ`
or `a:`) is mapped to one private-use Unicode character on both sides and back.
"""

from __future__ import annotations

import logging
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

from fstsynth.problem import Problem

log = logging.getLogger(__name__)

Token = str
Word = tuple[Token, ...]

# Private-use characters: they never occur in the data, so the mapping is reversible.
_PRIVATE_BASE = 0xE000
# Phonetisaurus reserves these in its lexicon and alignment formats.
_RESERVED = set("}|_-")


class Error(Exception):
    """The Phonetisaurus binaries failed (internal to the benchmark peer)."""


def available() -> bool:
    """Whether the optional `phonetisaurus` package (with its binaries) is installed."""
    try:
        import phonetisaurus  # noqa: F401
    except ImportError:
        return False
    return True


def _environment() -> dict[str, str]:
    import phonetisaurus

    return phonetisaurus.guess_environment()


class _Codec:
    """Tokens <-> single private-use characters."""

    def __init__(self, tokens: Sequence[Token]) -> None:
        chars = []
        code = _PRIVATE_BASE
        for _ in tokens:
            while chr(code) in _RESERVED:
                code += 1
            chars.append(chr(code))
            code += 1
        self.encode_map = dict(zip(tokens, chars))
        self.decode_map = {c: t for t, c in self.encode_map.items()}

    def encode(self, word: Sequence[Token]) -> list[str]:
        return [self.encode_map[t] for t in word if t in self.encode_map]

    def decode(self, chars: Sequence[str]) -> Word:
        return tuple(self.decode_map[c] for c in chars if c in self.decode_map)


def _train_and_apply(
    pairs: Sequence[tuple[Word, Word]],
    queries: Sequence[Word],
    codec: _Codec,
    order: int,
    workdir: Path,
) -> list[Word]:
    env = _environment()
    lexicon = workdir / "lexicon.txt"
    lines = []
    for src, tgt in pairs:
        s, t = codec.encode(src), codec.encode(tgt)
        if s and t:  # Phonetisaurus cannot align an empty side
            lines.append("".join(s) + "\t" + " ".join(t))
    if not lines:
        return [() for _ in queries]
    lexicon.write_text("\n".join(lines) + "\n", encoding="utf-8")
    train = [
        "phonetisaurus-train", "--lexicon", str(lexicon), "--dir_prefix", str(workdir / "m"),
        "--ngram_order", str(order), "--seq1_del", "--seq2_del", "--grow",
    ]
    done = subprocess.run(train, env=env, cwd=workdir, capture_output=True, text=True)
    model = workdir / "m" / "model.fst"
    if done.returncode != 0 or not model.exists():
        raise Error(f"phonetisaurus-train failed: {done.stderr.strip()[-500:]}")
    words = ["".join(codec.encode(q)) for q in queries]
    word_list = workdir / "words.txt"
    word_list.write_text("\n".join(w for w in words if w) + "\n", encoding="utf-8")
    apply = ["phonetisaurus-apply", "--model", str(model), "--word_list", str(word_list), "--nbest", "1"]
    done = subprocess.run(apply, env=env, cwd=workdir, capture_output=True, text=True)
    if done.returncode != 0:
        raise Error(f"phonetisaurus-apply failed: {done.stderr.strip()[-500:]}")
    predicted: dict[str, Word] = {}
    for line in done.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and parts[0] not in predicted:
            # Output is "word<TAB>s1 s2 ..." (some versions put a score column first).
            predicted[parts[0]] = codec.decode(parts[-1].split())
    # A word Phonetisaurus cannot decode (an unseen symbol) gets no line: answer nothing.
    return [predicted.get(w, ()) for w in words]


def solve_with_pair_ngram(problem: Problem, order: int = 5) -> dict[tuple[int, int], Word]:
    """Answers for every query of `problem` (empty where no source or no model)."""
    codec = _Codec(sorted(problem.alphabet()))
    by_pair: dict[tuple[int, int], list[tuple[int, int]]] = {}
    answers: dict[tuple[int, int], Word] = {}
    for i, j in problem.queries:
        row = problem.cells[i]
        source = next((k for k, cell in enumerate(row) if cell is not None and k != j), None)
        if source is None:
            answers[(i, j)] = ()
            continue
        by_pair.setdefault((source, j), []).append((i, j))
    for (s, t), cells in sorted(by_pair.items()):
        with tempfile.TemporaryDirectory(prefix="pairngram-") as tmp:
            outputs = _train_and_apply(
                problem.training_pairs(s, t),
                [problem.cells[i][s] for i, _ in cells],
                codec,
                order,
                Path(tmp),
            )
        answers.update(zip(cells, outputs))
    return answers


__all__ = ["available", "Error", "solve_with_pair_ngram"]

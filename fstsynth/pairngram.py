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

Phonetisaurus reads the source side as a string of single-byte characters and the
target side as space-separated symbols, so every token (which may be several
characters, like `t͡ʃ` or `a:`) is mapped to one printable ASCII character on both
sides and back (private-use characters only past 90 distinct tokens).
"""

from __future__ import annotations

import logging
import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

from fstsynth.problem import Problem
from fstsynth.types import Token, Word

log = logging.getLogger(__name__)


# Phonetisaurus splits the source side into bytes, not characters (a multi-byte UTF-8
# character becomes several symbols that share prefixes, and the model learns garbage):
# code tokens as printable ASCII first, then private-use characters if there are more.
_ASCII = [chr(c) for c in range(0x21, 0x7F)]
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
        pool = [c for c in _ASCII if c not in _RESERVED]
        chars = pool[: len(tokens)]
        chars += [chr(_PRIVATE_BASE + k) for k in range(len(tokens) - len(chars))]
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
    # One token to one token (or to nothing) alignment chunks, as fstsynth's own
    # alignment: Phonetisaurus's defaults for large lexicons (chunks of up to 2 x 2)
    # let EM overfit a few dozen words into many-to-many chunks (the peer scored 2-4%
    # Exact on the dev split with them, 18% with 1 x 1 chunks and deletions on both
    # sides, 17% with 1 x 2 chunks; we keep the stronger peer). Phonetisaurus does not
    # decode insertions (source-side epsilons), so suffixes are out of its reach.
    train = [
        "phonetisaurus-train", "--lexicon", str(lexicon), "--dir_prefix", str(workdir / "m"),
        "--ngram_order", str(order), "--seq1_del", "--seq2_del", "--seq1_max", "1", "--seq2_max", "1",
    ]
    done = subprocess.run(train, env=env, cwd=workdir, capture_output=True, text=True)
    model = workdir / "m" / "model.fst"
    if done.returncode != 0 or not model.exists():
        # MITLM cannot estimate a high-order model from a handful of words: like any
        # n-gram user, back off to a lower order before giving up.
        if order > 2:
            return _train_and_apply(pairs, queries, codec, order - 1, workdir)
        log.warning("phonetisaurus-train failed; no answers for this column pair: %s",
                    done.stderr.strip()[-300:])
        return [() for _ in queries]
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
                [problem.cells[i][s] or () for i, _ in cells],  # known: chosen as the source
                codec,
                order,
                Path(tmp),
            )
        answers.update(zip(cells, outputs))
    return answers


__all__ = ["available", "Error", "solve_with_pair_ngram"]

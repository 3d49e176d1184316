"""The WFST peer: Phonetisaurus (joint n-gram G2P), from the `phonetisaurus` PyPI
package, which ships the binaries (`pip install '.[bench]'`).

Phonetisaurus reads a word as a string of characters and a pronunciation as
space-separated symbols, so every token is mapped to one private-use character (both
sides), and mapped back after decoding.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Sequence

Token = str
Word = tuple[Token, ...]

_PUA = 0xE000


class Peer:
    """Train on (source, target) token pairs, decode source words; times are wall clock."""

    def __init__(self, order: int = 6, chunk: int = 2) -> None:
        import phonetisaurus  # only the benchmark needs it

        self.env = phonetisaurus.guess_environment()
        self.order = order
        # The longest run of tokens on either side that one alignment chunk may hold
        # (phonetisaurus' --seq1_max/--seq2_max): 1 aligns token to token, 2 (its
        # default) also digraphs.
        self.chunk = chunk
        # The peak resident set of the largest peer process, from GNU time when it is
        # installed (the parent's RUSAGE_CHILDREN would count the pages a child shares
        # with this process before it execs the binary). None: not measured.
        self.time_binary = Path("/usr/bin/time").exists()
        self.peak_kib: int | None = None
        self.code: dict[Token, str] = {}
        self.back: dict[str, Token] = {}

    def _char(self, tok: Token) -> str:
        ch = self.code.get(tok)
        if ch is None:
            ch = chr(_PUA + len(self.code))
            self.code[tok] = ch
            self.back[ch] = tok
        return ch

    def run(self, train: Sequence[tuple[Word, Word]], queries: Sequence[Word]) -> list[Word | None]:
        """Predictions for `queries` (None where the peer gives none)."""
        with tempfile.TemporaryDirectory() as tmp:
            tmpdir = Path(tmp)
            lexicon = tmpdir / "lexicon.txt"
            lines = [
                "".join(self._char(t) for t in s) + "\t" + " ".join(self._char(t) for t in t_)
                for s, t_ in train
                if s and t_
            ]
            lexicon.write_text("\n".join(lines) + "\n", encoding="utf-8")
            self._run(
                tmpdir,
                ["phonetisaurus-train", "--lexicon", str(lexicon), "--seq1_del", "--seq2_del",
                 "--seq1_max", str(self.chunk), "--seq2_max", str(self.chunk),
                 "--grow", "--ngram_order", str(self.order), "--dir_prefix", str(tmpdir / "train"),
                 "--model_prefix", "model"],
                stdout=subprocess.DEVNULL,
            )
            model = tmpdir / "train" / "model.fst"
            wordlist = tmpdir / "words.txt"
            keep = [q for q in queries if q]
            wordlist.write_text("\n".join("".join(self._char(t) for t in q) for q in keep) + "\n", encoding="utf-8")
            out = self._run(
                tmpdir,
                ["phonetisaurus-apply", "--model", str(model), "--word_list", str(wordlist), "--nbest", "1"],
                stdout=subprocess.PIPE,
            ).stdout
        found: dict[str, Word] = {}
        for line in out.splitlines():
            parts = line.split()
            if parts:
                found.setdefault(parts[0], tuple(self.back.get(p, p) for p in parts[1:]))
        return [found.get("".join(self._char(t) for t in q)) if q else None for q in queries]

    def _run(self, tmpdir: Path, args: list[str], stdout: int) -> subprocess.CompletedProcess:
        """Run one peer binary in `tmpdir`, under GNU time when there is one."""
        report = tmpdir / "peak-kib.txt"
        if self.time_binary:
            args = ["/usr/bin/time", "-f", "%M", "-o", str(report), *args]
        done = subprocess.run(
            args, cwd=tmpdir, env=self.env, check=True, stdout=stdout, stderr=subprocess.DEVNULL, text=True
        )
        if self.time_binary and report.exists():
            kib = int(report.read_text().split()[-1])
            self.peak_kib = max(self.peak_kib or 0, kib)
        return done

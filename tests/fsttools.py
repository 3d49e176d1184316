"""Run words through exported transducers with the real OpenFst, HFST and foma binaries.

Each function takes a batch of words (token tuples over the model's alphabet, unseen
tokens already written `<unk>`) and returns one output per word (None where the tool
gave no output), running a fixed number of processes per batch, not one per word.

`require(*binaries)` skips the calling test on a developer machine without the tools;
with FSTSYNTH_REQUIRE_TOOLS=1 (set by `.ci/run`) a missing binary fails the test
instead, so CI cannot silently skip the interop tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Sequence

import pytest

from exporters.foma_script import foma_symbol

Word = tuple[str, ...]
#: Separates words in a batch; a symbol no model token can equal.
SEPARATOR = "␟"


def missing(*binaries: str) -> list[str]:
    return [b for b in binaries if shutil.which(b) is None]


def require(*binaries: str) -> None:
    """Skip the calling test when a binary is absent (a developer machine without the
    Debian tools); with FSTSYNTH_REQUIRE_TOOLS=1, as in CI, fail instead."""
    absent = missing(*binaries)
    if not absent:
        return
    message = f"needs {', '.join(absent)} (Debian packages: libfst-tools hfst foma graphviz)"
    if os.environ.get("FSTSYNTH_REQUIRE_TOOLS") == "1":
        pytest.fail(f"FSTSYNTH_REQUIRE_TOOLS=1 but {message}")
    pytest.skip(message)


def run(args: Sequence[str], cwd: Path, stdin: str | None = None) -> str:
    """Run a tool; a non-zero exit fails with its stderr."""
    proc = subprocess.run(
        list(args), cwd=cwd, input=stdin, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc.stdout


def _check_separator(words: Sequence[Word]) -> None:
    for word in words:
        assert SEPARATOR not in word, "a token equals the test separator"


def _split_batch(tokens: list[str], count: int) -> list[Word | None]:
    out: list[Word | None] = []
    current: list[str] = []
    for tok in tokens:
        if tok == SEPARATOR:
            out.append(tuple(current))
            current = []
        else:
            current.append(tok)
    assert not current and len(out) == count, f"expected {count} outputs, got {len(out)}"
    return out


# --------------------------------------------------------------------------- OpenFst


def openfst_apply(far: Path, key: str, symbols: Path, words: Sequence[Word], tmp: Path) -> list[Word | None]:
    """Apply the FST `key` of `far` to all words with OpenFst's command-line tools.

    `farextract` takes the FST out of the archive; the batch is one string
    `w1 SEP w2 SEP ...` and the transducer is extended by OpenFst itself to
    `(T SEP)*` (`fstconcat`, `fstclosure`), so one `fstcompose` + `fstshortestpath`
    applies it to every word.
    """
    _check_separator(words)
    table = symbols.read_text(encoding="utf-8").splitlines()
    labels = {line.split("\t")[0]: int(line.split("\t")[1]) for line in table if line}
    sep_label = max(labels.values()) + 1
    syms = tmp / "batch.syms"
    syms.write_text("\n".join([*table, f"{SEPARATOR}\t{sep_label}"]) + "\n", encoding="utf-8")
    run(["farextract", f"--keys={key}", "--range_delimiter=/", f"--filename_prefix={tmp}/", str(far)], tmp)
    model = tmp / key
    lines = []
    state = 0
    for word in words:
        for tok in (*word, SEPARATOR):
            lines.append(f"{state}\t{state + 1}\t{tok}")
            state += 1
    lines.append(str(state))
    (tmp / "batch.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp / "sep.txt").write_text(f"0\t1\t{SEPARATOR}\n1\n", encoding="utf-8")
    compat = "--fst_compat_symbols=false"
    # The model carries its own symbol table (without SEP): the extended table is
    # given to fstcompile and fstprint, and the model's is dropped for the batch.
    run(["fstsymbols", "--clear_isymbols", "--clear_osymbols", str(model), "model.fst"], tmp)
    run(["fstcompile", "--acceptor", f"--isymbols={syms}", "batch.txt", "batch.fst"], tmp)
    run(["fstcompile", "--acceptor", f"--isymbols={syms}", "sep.txt", "sep.fst"], tmp)
    run(["fstconcat", compat, "model.fst", "sep.fst", "model_sep.fst"], tmp)
    run(["fstclosure", compat, "model_sep.fst", "model_star.fst"], tmp)
    run(["fstarcsort", "--sort_type=ilabel", compat, "model_star.fst", "model_sorted.fst"], tmp)
    run(["fstcompose", compat, "batch.fst", "model_sorted.fst", "lattice.fst"], tmp)
    run(["fstshortestpath", compat, "lattice.fst", "path.fst"], tmp)
    run(["fstproject", "--project_type=output", compat, "path.fst", "out.fst"], tmp)
    run(["fstrmepsilon", compat, "out.fst", "out_noeps.fst"], tmp)
    run(["fsttopsort", compat, "out_noeps.fst", "out_sorted.fst"], tmp)
    printed = run(["fstprint", "--acceptor", f"--isymbols={syms}", "out_sorted.fst"], tmp)
    if not printed.strip():  # no path: some word has no output
        return [None] * len(words)
    arcs = [line.split("\t") for line in printed.splitlines() if line.count("\t") >= 2]
    arcs.sort(key=lambda a: int(a[0]))
    return _split_batch([a[2] for a in arcs], len(words))


# --------------------------------------------------------------------------- HFST


def hfst_apply(att: Path, words: Sequence[Word], tmp: Path) -> list[Word | None]:
    """Compile AT&T text with `hfst-txt2fst` and apply it to every word.

    The words are compiled with `hfst-strings2fst -S` (space-separated symbols, so the
    tokenization is exactly fstsynth's), composed with the model (`hfst-compose`,
    one input transducer per word) and printed with `hfst-fst2strings`.
    """
    run(["hfst-txt2fst", "-i", str(att), "-o", "model.hfst"], tmp)
    escaped = [" ".join(t.replace("\\", "\\\\").replace(":", "\\:") for t in w) for w in words]
    (tmp / "words.txt").write_text("\n".join(escaped) + "\n", encoding="utf-8")
    run(["hfst-strings2fst", "-S", "-i", "words.txt", "-o", "words.hfst"], tmp)
    run(["hfst-compose", "-1", "words.hfst", "-2", "model.hfst", "-o", "applied.hfst"], tmp)
    run(["hfst-project", "-p", "output", "-i", "applied.hfst", "-o", "outputs.hfst"], tmp)
    printed = run(["hfst-fst2strings", "-S", "-X", "print-space", "-i", "outputs.hfst"], tmp)
    results: list[Word | None] = []
    current: list[str] = []
    # `--` separates the inputs' string sets (none after the last); an output that is
    # the empty string is an empty line.
    blocks: list[list[str]] = [[]]
    for line in printed.split("\n")[:-1] if printed else []:
        if line == "--":
            blocks.append([])
        else:
            blocks[-1].append(line)
    results: list[Word | None] = []
    for lines in blocks:
        assert len(lines) <= 1, f"several outputs for one word: {lines}"
        results.append(tuple(lines[0].split()) if lines else None)
    assert len(results) == len(words), f"expected {len(words)} outputs, got {len(results)}"
    return results


def hfst_lookup(att: Path, words: Sequence[str], tmp: Path) -> list[list[str]]:
    """`hfst-lookup` on plain (unspaced) words, as a user types them; all outputs."""
    run(["hfst-txt2fst", "-i", str(att), "-o", "lookup.hfst"], tmp)
    run(["hfst-fst2fst", "-w", "-i", "lookup.hfst", "-o", "lookup.hfstol"], tmp)
    printed = run(["hfst-lookup", "-q", "lookup.hfstol"], tmp, stdin="\n".join(words) + "\n")
    return _xerox_results(printed, words)


def _xerox_results(printed: str, words: Sequence[str]) -> list[list[str]]:
    out: dict[str, list[str]] = {}
    order: list[str] = []
    for line in printed.splitlines():
        if not line.strip():
            continue
        parts = line.split("\t")
        if parts[0] not in out:
            out[parts[0]] = []
            order.append(parts[0])
        if not parts[1].endswith("+?"):
            out[parts[0]].append(parts[1])
    return [out.get(w, []) for w in words]


# --------------------------------------------------------------------------- foma


def foma_spaced_apply(load: str, tokens: Sequence[str], words: Sequence[Word], tmp: Path) -> list[Word | None]:
    """Apply a foma network to every word with `flookup -i` (apply down).

    `load` is the foma command(s) that put the network on the stack (`read att F` or
    `source F`). foma splits input into the longest symbols it knows, which is not
    fstsynth's tokenization when tokens run together (`t` `ʃ` vs `tʃ`); so foma itself
    wraps the network as `S.i .o. N .o. S`, where S writes a separator after every
    token: input and output are then separator-delimited, and one `flookup` run
    applies it to the whole batch.
    """
    _check_separator(words)
    sep = foma_symbol(SEPARATOR)
    tok = "[ " + " | ".join(foma_symbol(t) for t in sorted(set(tokens))) + " ]"
    script = "\n".join([
        load,
        "define Net;",
        f"define Sep [ {tok} 0:{sep} ]*;",
        f"regex Sep.i .o. Net .o. [0:{sep}] Sep;",  # every output starts with SEP
        "save stack spaced.fomabin",
        "",
    ])
    (tmp / "spaced.foma").write_text(script, encoding="utf-8")
    log = run(["foma", "-f", "spaced.foma"], tmp)
    assert (tmp / "spaced.fomabin").is_file(), f"foma did not compile the network: {log[-2000:]}"
    assert all(words), "flookup cannot look up the empty word"
    lines = ["".join(t + SEPARATOR for t in w) for w in words]
    printed = run(["flookup", "-i", "-x", "spaced.fomabin"], tmp, stdin="\n".join(lines) + "\n")
    results: list[Word | None] = []
    for block in printed.strip("\n").split("\n\n"):
        outs = block.split("\n")
        assert len(outs) == 1, f"expected one output, got {outs}"
        out = outs[0]
        if out == "+?":
            results.append(None)
        else:
            assert out.startswith(SEPARATOR) and out.endswith(SEPARATOR), out
            results.append(tuple(out[1:].split(SEPARATOR)[:-1]))
    assert len(results) == len(words), f"expected {len(words)} outputs, got {len(results)}"
    return results

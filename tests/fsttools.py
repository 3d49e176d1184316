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


def openfst_apply(
    far: Path, keys: str | Sequence[str], symbols: Path, words: Sequence[Word], tmp: Path
) -> list[Word | None]:
    """Apply the FST `keys` of `far` (or several, one after the other: a model's
    transducers, stage by stage) to all words with OpenFst's command-line tools.

    `farextract` takes each FST out of the archive; the batch is one string
    `w1 SEP w2 SEP ...` and each transducer is extended by OpenFst itself to
    `(T SEP)*` (`fstconcat`, `fstclosure`), so one `fstcompose` per transducer (the
    output side of one lattice is the input of the next) and one `fstshortestpath`
    apply them to every word. `symbols` must name every symbol the transducers write.
    """
    _check_separator(words)
    chain = [keys] if isinstance(keys, str) else list(keys)
    table = symbols.read_text(encoding="utf-8").splitlines()
    labels = {line.split("\t")[0]: int(line.split("\t")[1]) for line in table if line}
    # Far above any label of the model's own tables (tokens, then the symbols between
    # its stages), which `symbols` does not list.
    sep_label = max(max(labels.values()) + 1, 1 << 30)
    syms = tmp / "batch.syms"
    syms.write_text("\n".join([*table, f"{SEPARATOR}\t{sep_label}"]) + "\n", encoding="utf-8")
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
    run(["fstcompile", "--acceptor", f"--isymbols={syms}", "batch.txt", "batch.fst"], tmp)
    run(["fstcompile", "--acceptor", f"--isymbols={syms}", "sep.txt", "sep.fst"], tmp)
    current = "batch.fst"
    for k, key in enumerate(chain):
        run(["farextract", f"--keys={key}", "--range_delimiter=/", f"--filename_prefix={tmp}/", str(far)], tmp)
        # The model carries its own symbol table (without SEP): the extended table is
        # given to fstcompile and fstprint, and the model's is dropped for the batch.
        run(["fstsymbols", "--clear_isymbols", "--clear_osymbols", key, f"model{k}.fst"], tmp)
        run(["fstconcat", compat, f"model{k}.fst", "sep.fst", f"model{k}_sep.fst"], tmp)
        run(["fstclosure", compat, f"model{k}_sep.fst", f"model{k}_star.fst"], tmp)
        run(["fstarcsort", "--sort_type=ilabel", compat, f"model{k}_star.fst", f"model{k}_sorted.fst"], tmp)
        run(["fstcompose", compat, current, f"model{k}_sorted.fst", f"lattice{k}.fst"], tmp)
        if k < len(chain) - 1:  # the outputs, as the next transducer's input
            run(["fstproject", "--project_type=output", compat, f"lattice{k}.fst", f"outputs{k}.fst"], tmp)
            run(["fstrmepsilon", compat, f"outputs{k}.fst", f"next{k}.fst"], tmp)
            current = f"next{k}.fst"
    run(["fstshortestpath", compat, f"lattice{len(chain) - 1}.fst", "path.fst"], tmp)
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


def hfst_apply(att: Path | Sequence[Path], words: Sequence[Word], tmp: Path) -> list[Word | None]:
    """Compile AT&T text with `hfst-txt2fst` and apply it to every word (or several,
    one after the other: a model's passes or stages).

    The words are compiled with `hfst-strings2fst -S` (space-separated symbols, so the
    tokenization is exactly fstsynth's), composed with the model (`hfst-compose`,
    one input transducer per word; the output side is the next pass's input) and
    printed with `hfst-fst2strings`.
    """
    escaped = [" ".join(t.replace("\\", "\\\\").replace(":", "\\:") for t in w) for w in words]
    (tmp / "words.txt").write_text("\n".join(escaped) + "\n", encoding="utf-8")
    run(["hfst-strings2fst", "-S", "-i", "words.txt", "-o", "outputs.hfst"], tmp)
    for k, file in enumerate([att] if isinstance(att, Path) else att):
        run(["hfst-txt2fst", "-i", str(file), "-o", f"model{k}.hfst"], tmp)
        run(["hfst-compose", "-1", "outputs.hfst", "-2", f"model{k}.hfst", "-o", "applied.hfst"], tmp)
        run(["hfst-project", "-p", "output", "-i", "applied.hfst", "-o", "outputs.hfst"], tmp)
    printed = run(["hfst-fst2strings", "-S", "-X", "print-space", "-i", "outputs.hfst"], tmp)
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


def foma_spaced_apply(
    load: str | Sequence[str], tokens: Sequence[str], words: Sequence[Word], tmp: Path
) -> list[Word | None]:
    """Apply a foma network to every word with `flookup -i` (apply down); given several,
    apply them one after the other (a model's passes or stages), each output the next
    one's input.

    `load` is the foma command(s) that put the network on the stack (`read att F` or
    `source F`); `tokens`, every symbol the networks read. foma splits input into the
    longest symbols it knows, which is not fstsynth's tokenization when tokens run
    together (`t` `ʃ` vs `tʃ`); so foma itself wraps the network as `S.i .o. N .o. S`,
    where S writes a separator after every token: input and output are then
    separator-delimited, and one `flookup` run applies it to the whole batch.
    """
    _check_separator(words)
    sep = foma_symbol(SEPARATOR)
    tok = "[ " + " | ".join(foma_symbol(t) for t in sorted(set(tokens))) + " ]"
    # Every word is written SEP t1 SEP t2 SEP ... (the empty word: SEP, a line flookup
    # can read), on both sides, so that an output is the next network's input as is.
    lines: list[str | None] = [SEPARATOR + "".join(t + SEPARATOR for t in w) for w in words]
    for k, command in enumerate([load] if isinstance(load, str) else load):
        script = "\n".join([
            command,
            "define Net;",
            f"define Sep [ {tok} 0:{sep} ]*;",
            f"regex [{sep}:0 Sep.i] .o. Net .o. [0:{sep}] Sep;",
            f"save stack spaced{k}.fomabin",
            "",
        ])
        (tmp / f"spaced{k}.foma").write_text(script, encoding="utf-8")
        log = run(["foma", "-f", f"spaced{k}.foma"], tmp)
        assert (tmp / f"spaced{k}.fomabin").is_file(), f"foma did not compile the network: {log[-2000:]}"
        todo = [i for i, line in enumerate(lines) if line is not None]
        printed = run(
            ["flookup", "-i", "-x", f"spaced{k}.fomabin"], tmp, stdin="\n".join(lines[i] for i in todo) + "\n"  # type: ignore[misc]
        )
        blocks = printed.strip("\n").split("\n\n")
        assert len(blocks) == len(todo), f"expected {len(todo)} outputs, got {len(blocks)}"
        for i, block in zip(todo, blocks):
            outs = block.split("\n")
            assert len(outs) == 1, f"expected one output, got {outs}"
            lines[i] = None if outs[0] == "+?" else outs[0]
    results: list[Word | None] = []
    for line in lines:
        if line is None:
            results.append(None)
        else:
            assert line.startswith(SEPARATOR) and line.endswith(SEPARATOR), line
            results.append(tuple(line[1:].split(SEPARATOR)[:-1]))
    return results


def foma_definitions(script: Path, tmp: Path) -> Path:
    """Source a foma script once and save what it defines (`save defined`), so that
    several networks built from its definitions (`load defined F` + `regex ...`) do
    not compile its rules again each."""
    saved = tmp / "defined.foma"
    run(["foma", "-e", f"source {script}", "-e", f"save defined {saved}", "-s"], tmp)
    assert saved.is_file(), f"foma did not save the definitions of {script}"
    return saved


"""A grammar's passes as one transducer, applied to words, written to a FAR; its `main`.

`pass_transducers` builds each pass (`exporters/pynini_runtime.py`), `cascade` composes
them, `rewrite` applies one to a word (putting back the tokens it has never seen),
`write_far` saves them and `grammar_main` is an exported grammar's command line.

This file is copied, after the line that marks its start, into every exported grammar
(`exporters.pynini_grammar`), after `exporters/pynini_rules.py` and
`exporters/pynini_runtime.py`.
"""

# ---- imports ----
# (No `from __future__ import annotations`, as in the files copied before this one.)
import os
import sys
import tempfile
from typing import Callable, Iterable, Mapping, Sequence

import pynini

# ---- the rules and the passes (a grammar has them above, copied from the files named) ----
from exporters.pynini_rules import Pass, Transformation
from exporters.pynini_runtime import (
    PassBuilder,
    Symbols,
    UNK,
    label_string,
    label_acceptor,
)

# ---- runtime (everything below is copied into exported grammars) ----

# -- whole grammars


def pass_transducers(
    passes: Sequence[Pass], tokens: Sequence[str], classes: Mapping[str, Iterable[str]]
) -> tuple[list[pynini.Fst], Symbols]:
    """One transducer per pass (from tokens to tokens, through the cells the next pass
    reads), and the symbols they use."""
    symbols = Symbols(tokens)
    tags = [p.tags_read() for p in passes] + [[]]
    tag_names: dict[Transformation, str] = {}
    for tag in (t for ts in tags for t in ts):
        tag_names.setdefault(tag, f"t{len(tag_names) + 1}")
    fsts = []
    for k, pass_ in enumerate(passes):
        builder = PassBuilder(symbols, k + 1, pass_.rules, classes, tags[k] if k else [], tags[k + 1], tag_names)
        fsts.append(builder.transducer())
    if not fsts:  # no pass: the identity
        fsts.append(label_acceptor(symbols.token(t) for t in tokens).closure())
    return fsts, symbols


#: Compositions of passes larger than this are not optimized (determinizing and
#: minimizing over label pairs): a 3-pass benchmark cascade of 1.7M states took 4 minutes
#: to optimize (to 564k), and applying it needs no optimizing.
OPTIMIZE_STATES_LIMIT = 100_000


def cascade(passes: Sequence[Pass], tokens: Sequence[str], classes: Mapping[str, Iterable[str]]) -> pynini.Fst:
    """The passes composed in order, with the token symbol table attached."""
    fsts, symbols = pass_transducers(passes, tokens, classes)
    fst = fsts[0]
    for nxt in fsts[1:]:
        fst = pynini.compose(fst, nxt.arcsort("ilabel"))
        fst = fst.optimize() if fst.num_states() <= OPTIMIZE_STATES_LIMIT else fst.connect()
    return _with_tokens(fst, symbols)


def _with_tokens(fst: pynini.Fst, symbols: Symbols) -> pynini.Fst:
    fst.arcsort("ilabel")
    table = symbols.token_table()
    fst.set_input_symbols(table)
    fst.set_output_symbols(table)
    return fst


def rewrite(fst: pynini.Fst, word: Sequence[str]) -> list[str]:
    """The output of `fst` (one of this grammar's) on `word` (a list of tokens).

    A token not in the symbol table is read as `<unk>`; where the output keeps or
    copies it, it is put back: if the word has one kind of unseen token, every `<unk>`
    written is that token; with several kinds, they are put back in order when the
    output has as many `<unk>` as the input, else `<unk>` is left (as `fstsynth apply`
    does)."""
    table = fst.input_symbols()
    mapped = [t if table.member(t) else UNK for t in word]
    lattice = pynini.compose(label_string([table.find(t) for t in mapped]), fst)
    outputs = {tuple(x for x in path.split() if x) for path in lattice.paths(output_token_type=table).ostrings()}
    if len(outputs) != 1:
        raise ValueError(f"{len(outputs)} outputs for {' '.join(word)!r} (a grammar gives exactly one)")
    (output,) = outputs
    unknown = [orig for orig, m in zip(word, mapped) if m == UNK and orig != UNK]
    if unknown and UNK in output:
        kinds = set(unknown)
        if len(kinds) == 1:
            return [unknown[0] if t == UNK else t for t in output]
        if output.count(UNK) == len(unknown):
            found = iter(unknown)
            return [next(found) if t == UNK else t for t in output]
    return list(output)


def write_far(path: str, fsts: Mapping[str, pynini.Fst]) -> None:
    """An OpenFst archive of `fsts`, written under a temporary name and renamed into
    place (keys in sorted order: the default FAR type drops a key added out of order)."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.tmp-", dir=directory)
    os.close(handle)
    try:
        far = pynini.Far(tmp, mode="w", arc_type="standard", far_type="default")
        for key in sorted(fsts):
            far[key] = fsts[key]
        far.close()
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as an ordinary new file (mkstemp makes it private)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def grammar_main(
    argv: Sequence[str], pairs: Mapping[str, Callable[[], list[Pass]]], tokens: Sequence[str],
    classes: Mapping[str, Iterable[str]],
) -> int:
    """`python GRAMMAR.py OUT.far [--passes] [KEY ...]`: write the column pairs' transducers
    (every pair, or the keys given); with `--passes`, one per pass (`KEY.pass1`, ...)."""
    args = [a for a in argv if a != "--passes"]
    if not args or args[0].startswith("-"):
        print("usage: python GRAMMAR.py OUT.far [--passes] [pair-S-T ...]", file=sys.stderr)
        return 2
    out, keys = args[0], args[1:] or sorted(pairs)
    unknown = [k for k in keys if k not in pairs]
    if unknown:
        print(f"unknown column pair {unknown[0]!r}; this grammar has {', '.join(sorted(pairs))}", file=sys.stderr)
        return 2
    fsts: dict[str, pynini.Fst] = {}
    for key in keys:
        if "--passes" in argv:
            found, symbols = pass_transducers(pairs[key](), tokens, classes)
            fsts.update({f"{key}.pass{k}": _with_tokens(f, symbols) for k, f in enumerate(found, start=1)})
        else:
            fsts[key] = cascade(pairs[key](), tokens, classes)
    write_far(out, fsts)
    print(f"wrote {out}: {', '.join(sorted(fsts))}")
    return 0

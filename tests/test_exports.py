"""Exports, each proven by the real tool that reads it (OpenFst, HFST, foma, Graphviz),
on the project's own examples and on hand-written programs using every DSL construct.

The benchmark-wide interop check is in test_exports_benchmark.py.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import plural_copy
from exporters.att import to_att
from exporters.foma_script import foma_symbol, program_to_foma, tag_symbols
from fstsynth.spe import derivation, rule_to_spe
from programs import ALPHABET as FEATURE_ALPHABET
from programs import FEATURES as FEATURE_FEATURES
from programs import PROGRAMS as FEATURE_PROGRAMS
from fsttools import (
    foma_definitions,
    foma_spaced_apply,
    hfst_apply,
    hfst_lookup,
    openfst_apply,
    require,
    run,
)
from fstsynth.cli import app
from fstsynth.compiler import compile_program
from fstsynth.dsl import (
    BOUNDARY,
    CopyInsert,
    CopyReplace,
    Delete,
    Identity,
    Insert,
    Is,
    IsToken,
    Not,
    Pass,
    Program,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    TierIs,
    TransformationApplied,
)
from fstsynth.interpreter import run as interpret
from fstsynth.model_file import load_model, save_model
from fstsynth.problem import load_problem

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
runner = CliRunner()


def cli(*args: str, input: str | None = None):
    result = runner.invoke(app, list(args), input=input)
    return result


@pytest.fixture(scope="module")
def plural(plural_features_learned, tmp_path_factory) -> Path:
    """The plural example learned through the CLI, as a user does (once per session):
    this module's copy."""
    return plural_copy(plural_features_learned[0], tmp_path_factory, "plural", "model")


@pytest.fixture(scope="module")
def paradigm(tmp_path_factory, paradigm_default) -> Path:
    """data/paradigm.json's model (default options; learned once per session) saved."""
    out = tmp_path_factory.mktemp("paradigm") / "model"
    save_model(paradigm_default[1], out)
    return out


def plural_words() -> list[tuple[str, ...]]:
    """Training sources, the example words, and a word with unseen tokens."""
    lines = (DATA / "plural.tsv").read_text(encoding="utf-8").splitlines()
    train = [tuple(line.split("\t")[0].split()) for line in lines if line and not line.startswith("#")]
    words_text = (DATA / "plural-words.txt").read_text(encoding="utf-8")
    extra = [tuple(line.split()) for line in words_text.splitlines() if line]
    return train + extra + [("q", "ʌ", "ʒ")]


def fstsynth_apply(model: Path, words, *pair: str) -> list[tuple[str, ...]]:
    """`fstsynth apply`'s own output, as the reference every tool is compared with."""
    result = cli("apply", str(model), *pair, input="\n".join(" ".join(w) for w in words) + "\n")
    assert result.exit_code == 0, result.output
    return [tuple(line.split()) for line in result.stdout.splitlines()]


def read_as_model(model: Path, words, *pair: str):
    """The words as the model reads them (unseen tokens -> <unk>), and the outputs of the
    transducer before unseen tokens are put back (what an external tool gives)."""
    m = load_model(model)
    pm = m.pair(*[p for p in pair if not p.startswith("-")] or [None])
    mapped = [pm.map_unknown(w) for w in words]
    return m, pm, mapped


def stage_keys(model: Path, source: int = 0, target: int = 1) -> list[str]:
    """The FAR keys of a pair's transducers in the model, in the order they apply."""
    doc = json.loads((model / "model.json").read_text(encoding="utf-8"))
    return next(e["stages"] for e in doc["pairs"] if (e["source"], e["target"]) == (source, target))


def seen_words(model: Path) -> list[tuple[str, ...]]:
    """The plural words without unseen tokens (a user looking up a plain word with an
    unseen token would have to write it `<unk>`)."""
    _, _, mapped = read_as_model(model, plural_words())
    return [w for w, m in zip(plural_words(), mapped) if w == m]


# ----------------------------------------------------------------------------- FAR


def test_far_is_read_by_openfst_tools_with_token_names(plural: Path, tmp_path: Path) -> None:
    require("farinfo", "farextract", "fstinfo", "fstprint")
    exported = tmp_path / "plural.far"
    assert cli("export", str(plural), "--format", "far", "-o", str(exported)).exit_code == 0
    # The model's own archive keeps the passes' transducers; the export, their composition.
    stages = stage_keys(plural)
    assert stages[0].startswith("pair-0-1.pass1.")
    for far, keys in ((plural / "model.far", stages), (exported, ["pair-0-1"])):
        info = run(["farinfo", str(far)], tmp_path)
        assert f"# of FSTs                                         {len(keys)}" in info
        listing = run(["farinfo", "--list_fsts", str(far)], tmp_path)
        assert [line.split()[0] for line in listing.splitlines()[1:] if line.strip()] == sorted(keys)
        run(["farextract", "--filename_prefix=x-", str(far)], tmp_path)
        fst_info = run(["fstinfo", f"x-{keys[0]}"], tmp_path)
        symbols_line = next(line for line in fst_info.splitlines() if line.startswith("input symbol table"))
        assert "none" not in symbols_line
        printed = run(["fstprint", f"x-{keys[0]}"], tmp_path)
        labels = {field for line in printed.splitlines() for field in line.split("\t")[2:4]}
        assert {"ɪ", "z", "s", "<unk>"} <= labels
        assert not any(label.isdigit() for label in labels), "fstprint printed integers, not tokens"


def test_far_export_of_one_pair_round_trips_through_farextract(paradigm: Path, tmp_path: Path) -> None:
    require("farinfo")
    out = tmp_path / "one.far"
    result = cli("export", str(paradigm), "--format", "far", "--source", "stem", "--target", "in stem", "-o", str(out))
    assert result.exit_code == 0, result.output
    listing = run(["farinfo", "--list_fsts", str(out)], tmp_path)
    keys = [line.split()[0] for line in listing.splitlines()[1:] if line.strip()]
    assert keys == ["pair-0-2"]
    everything = tmp_path / "all.far"
    assert cli("export", str(paradigm), "--format", "far", "-o", str(everything)).exit_code == 0
    listing = run(["farinfo", "--list_fsts", str(everything)], tmp_path)
    assert len([line for line in listing.splitlines()[1:] if line.strip()]) == len(load_model(paradigm).pairs)


def test_openfst_cli_applies_the_far_like_fstsynth_apply(plural: Path, tmp_path: Path) -> None:
    require("farextract", "fstcompile", "fstconcat", "fstclosure", "fstcompose", "fstshortestpath")
    words = plural_words()
    _, pm, mapped = read_as_model(plural, words)
    exported = tmp_path / "plural.far"
    assert cli("export", str(plural), "--format", "far", "-o", str(exported)).exit_code == 0
    (tmp_path / "composed").mkdir()
    (tmp_path / "passes").mkdir()
    got = openfst_apply(exported, "pair-0-1", plural / "symbols.txt", mapped, tmp_path / "composed")
    by_pass = openfst_apply(
        plural / "model.far", stage_keys(plural), plural / "symbols.txt", mapped, tmp_path / "passes"
    )
    assert got == by_pass == [pm.transducers().apply(w) for w in mapped]
    # Where no unseen token is involved, that is exactly what `fstsynth apply` prints.
    reference = fstsynth_apply(plural, words)
    known = [k for k, w in enumerate(words) if w == mapped[k]]
    assert known and [got[k] for k in known] == [reference[k] for k in known]


def test_export_passes_writes_one_transducer_per_pass(paradigm: Path, tmp_path: Path) -> None:
    require("farinfo", "hfst-txt2fst")
    model = load_model(paradigm)
    pm = model.pair("stem", "in stem")
    count = len(pm.program.passes)
    far = tmp_path / "p.far"
    pair = ("-s", "stem", "-t", "in stem")
    assert cli("export", str(paradigm), "-f", "far", *pair, "--passes", "-o", str(far)).exit_code == 0
    listing = run(["farinfo", "--list_fsts", str(far)], tmp_path)
    keys = [line.split()[0] for line in listing.splitlines()[1:] if line.strip()]
    assert keys == [f"pair-0-2.pass{k}" for k in range(1, count + 1)]
    result = cli("export", str(paradigm), "-f", "att", *pair, "--passes", "-o", str(tmp_path / "p.att"))
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("p."))
    assert written == sorted(["p.far", "p.syms", *[f"p.pass{k}.att" for k in range(1, count + 1)]])
    run(["hfst-txt2fst", "-i", "p.pass1.att", "-o", "p1.hfst"], tmp_path)
    refused = cli("export", str(paradigm), "-f", "dot", "--passes", "-s", "0", "-t", "2", "-o", str(tmp_path / "x"))
    assert refused.exit_code == 2 and "--passes applies to the far, att and foma formats" in refused.output


def test_a_composition_too_large_to_build_is_refused_with_a_hint(plural: Path, tmp_path: Path, monkeypatch) -> None:
    import fstsynth.transducers as transducers

    monkeypatch.setattr(transducers, "MAX_COMPOSED_STATES_BOUND", 1)
    result = cli("export", str(plural), "--format", "far", "-o", str(tmp_path / "x.far"))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "source -> target: composing the 1 pass transducers" in lines[0]
    assert lines[0].endswith("export it with --passes (one transducer per pass, applied in order)")
    assert not (tmp_path / "x.far").exists()
    assert cli("export", str(plural), "--format", "far", "--passes", "-o", str(tmp_path / "x.far")).exit_code == 0


README = (ROOT / "docs" / "exporting.md").read_text(encoding="utf-8")


def readme_block(marker: str) -> str:
    """The shell block of docs/exporting.md that contains `marker`."""
    blocks = README.split("```sh\n")[1:]
    found = [b.split("```")[0] for b in blocks if marker in b.split("```")[0]]
    assert len(found) == 1, f"one README shell block should contain {marker!r}"
    return found[0]


def run_readme_block(marker: str, plural: Path, tmp_path: Path) -> list[str]:
    """Run the README block containing `marker` in `tmp_path`, where `plural-model` is
    the plural model; the lines it prints, without `fstsynth export`'s reports."""
    (tmp_path / "plural-model").symlink_to(plural)
    installed = shutil.which("fstsynth")
    assert installed, "the fstsynth command is not installed (pip install -e .)"
    script = f"set -e\nexport PATH={Path(installed).parent}:$PATH\n" + readme_block(marker)
    printed = run(["bash", "-c", script], tmp_path)
    return [line for line in printed.splitlines() if not line.startswith("wrote ")]


@pytest.mark.parametrize("marker", ["model-pair-0-1 |", "model-pair-0-1.pass1"])
def test_readme_openfst_recipes(plural: Path, tmp_path: Path, marker: str) -> None:
    """The README's OpenFst commands, run as written (one word per FST): the exported
    composition, and the model's own stage transducers one after the other."""
    require("farextract", "farcompilestrings", "fstcompose", "farcreate", "farprintstrings")
    # The recipes start a few tools per word: a third of the training words (each plural
    # ending among them), the examples and the unseen token.
    words = plural_words()
    words = words[:20:3] + words[20:]
    (tmp_path / "words.txt").write_text("\n".join(" ".join(w) for w in words) + "\n", encoding="utf-8")
    outputs = run_readme_block(marker, plural, tmp_path)
    _, pm, mapped = read_as_model(plural, words)
    assert [tuple(line.split()) for line in outputs] == [pm.transducers().apply(w) for w in mapped]


@pytest.mark.parametrize("marker", ["hfst-txt2fst -i $p", "save defined passes.defs"])
def test_readme_pass_by_pass_recipes(plural: Path, tmp_path: Path, marker: str) -> None:
    """The README's HFST and foma commands for pass transducers, run as written."""
    require("hfst-txt2fst", "hfst-strings2fst", "hfst-compose", "hfst-project", "hfst-fst2strings", "foma", "flookup")
    words = seen_words(plural)
    (tmp_path / "words.txt").write_text("\n".join(" ".join(w) for w in words) + "\n", encoding="utf-8")
    outputs = run_readme_block(marker, plural, tmp_path)
    reference = fstsynth_apply(plural, words)
    if "hfst" in marker:
        assert [tuple(line.split()) for line in outputs] == reference
    else:  # foma prints the words unspaced
        assert outputs == ["".join(r) for r in reference]


# ----------------------------------------------------------------------------- AT&T


def test_att_compiles_in_hfst_and_gives_fstsynth_outputs(plural: Path, tmp_path: Path) -> None:
    require("hfst-txt2fst", "hfst-strings2fst", "hfst-compose", "hfst-project", "hfst-fst2strings")
    att = tmp_path / "plural.att"
    result = cli("export", str(plural), "--format", "att", "-o", str(att))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "plural.syms").is_file()
    words = plural_words()
    _, pm, mapped = read_as_model(plural, words)
    (tmp_path / "h").mkdir()
    assert hfst_apply(att, mapped, tmp_path / "h") == [pm.transducers().apply(w) for w in mapped]
    # Tokens the model never saw pass through HFST as through fstsynth.
    (tmp_path / "u").mkdir()
    assert hfst_apply(att, words, tmp_path / "u") == fstsynth_apply(plural, words)


def test_hfst_lookup_on_plain_words_as_in_the_readme(plural: Path, tmp_path: Path) -> None:
    require("hfst-txt2fst", "hfst-fst2fst", "hfst-lookup")
    att = tmp_path / "plural.att"
    assert cli("export", str(plural), "--format", "att", "-o", str(att)).exit_code == 0
    words = seen_words(plural)
    reference = fstsynth_apply(plural, words)
    got = hfst_lookup(att, ["".join(w) for w in words], tmp_path)
    assert got == [["".join(r)] for r in reference]


def test_att_is_read_by_foma_and_by_openfst_fstcompile(plural: Path, tmp_path: Path) -> None:
    require("foma", "flookup", "fstcompile", "fstisomorphic")
    att = tmp_path / "plural.att"
    assert cli("export", str(plural), "--format", "att", "-o", str(att)).exit_code == 0
    words = plural_words()
    _, pm, mapped = read_as_model(plural, words)
    (tmp_path / "f").mkdir()
    got = foma_spaced_apply(f"read att {att}", sorted(pm.tables.tokens), mapped, tmp_path / "f")
    assert got == [pm.transducers().apply(w) for w in mapped]
    # Tokens the model never saw pass through foma as through fstsynth.
    (tmp_path / "u").mkdir()
    unseen = sorted({t for w in words for t in w} - set(pm.tables.tokens))
    assert unseen
    got = foma_spaced_apply(f"read att {att}", sorted(pm.tables.tokens) + unseen, words, tmp_path / "u")
    assert got == fstsynth_apply(plural, words)
    # OpenFst reads the same text back with the .syms file: the same transducer.
    syms = tmp_path / "plural.syms"
    run(["fstcompile", f"--isymbols={syms}", f"--osymbols={syms}", str(att), "compiled.fst"], tmp_path)
    # The identity and unknown symbols are aliases of <unk> there: each doubles an arc
    # on <unk>, which the transducer keeps too (for words written with <unk>).
    printed = run(["fstprint", "compiled.fst"], tmp_path)
    lines = list(dict.fromkeys(printed.splitlines()))
    assert len(lines) < len(printed.splitlines())
    (tmp_path / "back.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run(["fstcompile", "back.txt", "back.fst"], tmp_path)
    assert cli("export", str(plural), "--format", "far", "-o", str(tmp_path / "plural.far")).exit_code == 0
    run(["farextract", "--filename_prefix=x-", "plural.far"], tmp_path)
    run(["fstsymbols", "--clear_isymbols", "--clear_osymbols", "x-pair-0-1", "orig.fst"], tmp_path)
    proc = subprocess.run(["fstisomorphic", "orig.fst", "back.fst"], cwd=tmp_path, check=False)
    assert proc.returncode == 0, "fstcompile of the AT&T text is not the FAR export's transducer"


def test_att_refuses_tokens_hfst_and_foma_read_specially() -> None:
    from exporters.att import Error

    fst = compile_program(Program(()), ("a", "@0@"), {}).transducers.composed()
    with pytest.raises(Error, match="@0@"):
        to_att(fst)


# ----------------------------------------------------------------------------- foma script


def test_foma_script_compiles_and_matches_fstsynth(plural: Path, paradigm: Path, tmp_path: Path) -> None:
    require("foma", "flookup")
    paradigm_pairs = [("--source", "stem", "--target", t) for t in ("my stem", "in stem")]
    for model, pairs in ((plural, [()]), (paradigm, paradigm_pairs)):
        for pair in pairs:
            script = tmp_path / "rules.foma"
            assert cli("export", str(model), "--format", "foma", "-o", str(script), *pair).exit_code == 0
            m, pm, _ = read_as_model(model, [], *pair)
            problem_words = plural_words() if model == plural else [
                row[pm.source] for row in load_problem(DATA / "paradigm.json").cells if row[pm.source]
            ]
            mapped = [pm.map_unknown(w) for w in problem_words]
            work = tmp_path / f"w{len(list(tmp_path.iterdir()))}"
            work.mkdir()
            got = foma_spaced_apply(f"source {script}", sorted(pm.tables.tokens), mapped, work)
            assert got == [pm.transducers().apply(w) for w in mapped]


def test_readme_foma_recipes_on_plain_words(plural: Path, tmp_path: Path) -> None:
    require("foma", "flookup")
    att, script = tmp_path / "plural.att", tmp_path / "plural.foma"
    assert cli("export", str(plural), "--format", "att", "-o", str(att)).exit_code == 0
    assert cli("export", str(plural), "--format", "foma", "-o", str(script)).exit_code == 0
    run(["foma", "-e", "read att plural.att", "-e", "save stack plural.fomabin", "-s"], tmp_path)
    run(["foma", "-e", "source plural.foma", "-e", "save stack plural-rules.fomabin", "-s"], tmp_path)
    words = seen_words(plural)
    reference = ["".join(r) for r in fstsynth_apply(plural, words)]
    stdin = "\n".join("".join(w) for w in words) + "\n"
    for binary in ("plural.fomabin", "plural-rules.fomabin"):
        printed = run(["flookup", "-i", "-x", binary], tmp_path, stdin=stdin)
        assert printed.split() == reference, binary


def test_foma_symbol_escapes_what_foma_reads_specially() -> None:
    assert foma_symbol("0") == "%0"
    assert foma_symbol("a:") == "a%:"
    assert foma_symbol("t͡ʃ") == "t͡ʃ"
    assert foma_symbol("<unk>") == "%<unk%>"


# A program using every DSL construct, over a small alphabet with the tokens foma and
# HFST are most likely to misread: foma's epsilon `0`, `?`, a `:`, a multi-character
# token that is the concatenation of two others (`t` `s` / `ts`).
EVERY_CONSTRUCT = Program((
    Pass((
        Rule((IsToken(BOUNDARY, 0), IsToken("t", 1)), Insert(("0",))),          # prefix
        Rule((IsToken("a", -1), IsToken("s", 0)), Identity()),                  # blocks
        Rule((Is("voice", 0), IsToken(BOUNDARY, 1)), Insert(("a:", "?"))),      # suffix
        Rule((IsToken("t", 0), IsToken("s", 1)), ReplaceBy("t", ("ts",))),
        Rule((Not(Is("voice", -1)), IsToken("s", 0)), CopyReplace(1)),
        Rule((IsToken("?", 0),), Delete()),
    )),
    Pass((
        Rule((TransformationApplied(CopyReplace(1), 0),), ReplaceAnyBy(("t", "s"))),
        Rule((TransformationApplied(Identity(), -1), IsToken("a", 0)), CopyInsert(-1)),
        Rule((Not(TransformationApplied(Insert(("a:", "?")), 1)), IsToken("a:", 0)), ReplaceBy("a:", ("a",))),
        Rule((IsToken(BOUNDARY, 0), Not(IsToken(BOUNDARY, 1))), CopyInsert(2)),
    )),
))
SMALL_FEATURES = {"a": {"voice": True}, "d": {"voice": True}, "a:": {"voice": True}}
SMALL_ALPHABET = ("a", "d", "t", "s", "ts", "0", "?", "a:")


def all_words(alphabet, max_len):
    for n in range(1, max_len + 1):
        yield from itertools.product(alphabet, repeat=n)


# Tier tests on both sides, near and far, of a feature and of the tier's end, negated,
# at the start position, and in a pass reading the previous pass's tags.
TIER_PROGRAM = Program((
    Pass((
        Rule((IsToken("i", 0), TierIs("vowel", "long", -2)), ReplaceBy("i", ("t",))),
        Rule((IsToken(BOUNDARY, 0), TierIs("vowel", "long", 1)), Insert(("h",))),
        Rule(
            (IsToken("a", 0), TierIs("vowel", BOUNDARY, 1), Not(TierIs("vowel", BOUNDARY, -1))),
            ReplaceBy("a", ("a:",)),
        ),
        Rule((Is("vowel", 0), Not(TierIs("vowel", "long", -2))), Identity()),
        Rule((IsToken("t", 0), TierIs("vowel", "long", -1)), ReplaceBy("t", ("d",))),
        Rule((IsToken("s", 0), Not(TierIs("vowel", "long", 2))), Delete()),
    )),
    Pass((
        Rule((TransformationApplied(Identity(), 0), TierIs("vowel", BOUNDARY, -1)), CopyInsert(0)),
        Rule((IsToken("d", 0), Not(TierIs("vowel", BOUNDARY, 2))), ReplaceBy("d", ("t", "s"))),
    )),
))
TIER_FEATURES = {"a": {"vowel": True}, "a:": {"vowel": True, "long": True}, "i": {"vowel": True}}
TIER_ALPHABET = ("a", "a:", "i", "t", "s")


@pytest.mark.parametrize("program, alphabet, features, variety", [
    (EVERY_CONSTRUCT, SMALL_ALPHABET, SMALL_FEATURES, 100),
    (TIER_PROGRAM, TIER_ALPHABET, TIER_FEATURES, 100),
    (FEATURE_PROGRAMS["features-set-agree-and-inclusive-tiers"], FEATURE_ALPHABET, FEATURE_FEATURES, 100),
], ids=["every-construct", "tiers", "feature-rules"])
def test_every_construct_through_foma_script_and_att(program, alphabet, features, variety, tmp_path: Path) -> None:
    """foma (rule script and AT&T) agree with the interpreter on every word up to length
    4 over the alphabet, and HFST up to length 3, for a program with every DSL construct
    and for one with tier tests."""
    require("foma", "flookup", "hfst-txt2fst", "hfst-strings2fst", "hfst-compose")
    compiled = compile_program(program, alphabet, features)
    words = [*all_words(alphabet, 4), ("b", "a")]  # `b` is unseen: <unk>
    mapped = [compiled.map_unknown(w) for w in words]
    expected = [interpret(program, w, features) for w in mapped]
    # The compiler agrees too: its tables in one batch (the transducers word by word
    # took a minute here; they are the AT&T file foma reads below, and every apply path
    # runs these programs in test_tables.py and test_equivalence.py).
    assert expected == compiled.tables().apply_many(mapped)
    assert len(set(expected)) > variety, "the program should do many different things"

    tokens = sorted(compiled.tokens)
    (tmp_path / "rules.foma").write_text(program_to_foma(program, tokens, features), encoding="utf-8")
    composed = compiled.transducers.composed()
    (tmp_path / "model.att").write_text(to_att(composed, composed.input_symbols().find("<unk>")), encoding="utf-8")
    for name, load in (("script", f"source {tmp_path / 'rules.foma'}"), ("att", f"read att {tmp_path / 'model.att'}")):
        work = tmp_path / name
        work.mkdir()
        got = foma_spaced_apply(load, tokens, mapped, work)
        wrong = [(w, e, g) for w, e, g in zip(mapped, expected, got) if e != g]
        assert not wrong, f"foma {name}: {len(wrong)} words differ, e.g. {wrong[:3]}"
    # HFST composes one transducer per word (slow in bulk): words up to length 3.
    (tmp_path / "h").mkdir()
    short = [k for k, w in enumerate(mapped) if len(w) <= 3]
    got = hfst_apply(tmp_path / "model.att", [mapped[k] for k in short], tmp_path / "h")
    wrong = [(mapped[k], expected[k], g) for k, g in zip(short, got) if expected[k] != g]
    assert not wrong, f"HFST: {len(wrong)} words differ, e.g. {wrong[:3]}"


# Feature names a features file may hold, which must not reach foma as they are (foma
# 0.10 crashed on a defined name with `_` in a rule context: issue 26), and a token
# spelled like the name the script would otherwise give a class.
ODD_FEATURES = {
    "a": {"ipa.back": True, "a_b": True, "syl": True},
    "i": {"x-1": True, "syl": True},
    "t": {"2nd": True, "a_b": True},
    "Fab": {"x-1": True},
    "s": {},
}
ODD_NAMES_PROGRAM = Program((
    Pass((
        Rule((Is("a_b", -1), IsToken(BOUNDARY, 1)), Insert(("s",))),
        Rule((Is("ipa.back", 0), TierIs("syl", "x-1", 1)), ReplaceBy("a", ("i",))),
        Rule((Not(Is("2nd", 1)), Is("x-1", 0)), Delete()),
        Rule((Is("2nd", 0), Not(TierIs("syl", "ipa.back", -1))), ReplaceAnyBy(("Fab",))),
    )),
))


def test_foma_class_names_are_letters_and_digits_whatever_the_feature_names(tmp_path: Path) -> None:
    require("foma", "flookup")
    alphabet = tuple(sorted(ODD_FEATURES))
    script = program_to_foma(ODD_NAMES_PROGRAM, alphabet, ODD_FEATURES)
    defined = re.findall(r"^define (\S+) ", script, flags=re.M)
    assert all(re.fullmatch(r"[A-Za-z0-9]+", name) for name in defined), defined
    assert len(set(defined)) == len(defined) and "Fab" not in defined  # `Fab` is a token
    (tmp_path / "rules.foma").write_text(script, encoding="utf-8")
    words = list(all_words(alphabet, 4))
    expected = [interpret(ODD_NAMES_PROGRAM, w, ODD_FEATURES) for w in words]
    assert len(set(expected)) > 100, "the program should do many different things"
    got = foma_spaced_apply(f"source {tmp_path / 'rules.foma'}", list(alphabet), words, tmp_path)
    wrong = [(w, e, g) for w, e, g in zip(words, expected, got) if e != g]
    assert not wrong, f"foma: {len(wrong)} words differ, e.g. {wrong[:3]}"


def test_foma_script_refuses_a_token_spelled_as_one_of_its_names() -> None:
    from exporters.foma_script import Error

    for token in ("Tok", "Pass1", "Marks2", "Model"):
        with pytest.raises(Error, match=f"token '{token}' is spelled as a name the foma script defines"):
            program_to_foma(ODD_NAMES_PROGRAM, ("a", token), ODD_FEATURES)


def test_pass_transducers_one_after_the_other_in_every_tool(tmp_path: Path) -> None:
    """The stage transducers (what the model keeps; `export --passes` composes each
    pass's) and the uncomposed foma script, applied one after the other by OpenFst,
    HFST and foma, give the interpreter's outputs; what flows between them carries
    annotated and tagged tokens, named in the symbol table (the script's own tag
    symbols, in the script)."""
    require("farextract", "fstcompile", "fstcompose", "hfst-txt2fst", "hfst-compose", "foma", "flookup")
    from fstsynth.far import write_far

    compiled = compile_program(EVERY_CONSTRUCT, SMALL_ALPHABET, SMALL_FEATURES)
    trans = compiled.transducers
    assert len(compiled.machines) == 2 and len(trans.stages) >= 2
    between = {tok for _, tok in trans.symbols} - set(compiled.tokens) - {"<eps>"}
    assert any(name.startswith("a<") for name in between), between  # tagged tokens, readable
    words = [*all_words(SMALL_ALPHABET, 3), ("b", "a")]  # `b` is unseen: <unk>
    mapped = [compiled.map_unknown(w) for w in words]
    expected = [interpret(EVERY_CONSTRUCT, w, SMALL_FEATURES) for w in mapped]
    keys = trans.stage_keys("p")
    write_far(tmp_path / "passes.far", dict(zip(keys, trans.stages)))
    trans.token_symbols().write_text(str(tmp_path / "tokens.syms"))
    atts = []
    for k, fst in enumerate(trans.stages, start=1):
        atts.append(tmp_path / f"stage{k}.att")
        atts[-1].write_text(to_att(fst), encoding="utf-8")
    tokens = sorted(compiled.tokens)
    script = tmp_path / "rules.foma"
    script.write_text(program_to_foma(EVERY_CONSTRUCT, tokens, SMALL_FEATURES, compose=False), encoding="utf-8")
    commands = [line for line in script.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    assert not any(line.startswith(("regex", "define Model")) for line in commands)  # nothing composed
    outputs = {}
    # HFST composes one transducer per word and stage (most of this test's time with
    # every word): the words up to length 2, every token among them. foma reads the same
    # AT&T files on every word.
    every, short = list(range(len(mapped))), [k for k, w in enumerate(mapped) if len(w) <= 2]
    assert {tok for k in short for tok in mapped[k]} == {tok for w in mapped for tok in w}
    for tool in ("OpenFst", "HFST", "foma", "foma rules"):
        work = tmp_path / tool.replace(" ", "_")
        work.mkdir()
        if tool == "OpenFst":
            outputs[tool] = every, openfst_apply(tmp_path / "passes.far", keys, tmp_path / "tokens.syms", mapped, work)
        elif tool == "HFST":
            outputs[tool] = short, hfst_apply(atts, [mapped[k] for k in short], work)
        elif tool == "foma":
            reads = sorted(set(tokens) | between)
            outputs[tool] = every, foma_spaced_apply([f"read att {a}" for a in atts], reads, mapped, work)
        else:
            tags = tag_symbols(EVERY_CONSTRUCT, tokens, SMALL_FEATURES)
            assert tags, "the program's second pass tests what the first did"
            defined = foma_definitions(script, work)
            loads = [f"load defined {defined}\nregex Tok* .o. Pass1;", f"load defined {defined}\nregex Pass2;"]
            outputs[tool] = every, foma_spaced_apply(loads, tokens + tags, mapped, work)
    for tool, (checked, got) in outputs.items():
        assert len(got) == len(checked)
        wrong = [(mapped[k], expected[k], g) for k, g in zip(checked, got) if expected[k] != g]
        assert not wrong, f"{tool}: {len(wrong)} words differ, e.g. {wrong[:3]}"


def test_foma_script_is_readable_rules() -> None:
    text = program_to_foma(EVERY_CONSTRUCT, sorted(set(SMALL_ALPHABET) | {"<unk>"}), SMALL_FEATURES)
    assert "define Pass1 [" in text and "define Pass2 [" in text
    assert "define FVoice [ a | a%: | d ];" in text
    assert "# rule 3: ∅ -> a: ? / [+voice] _ #" in text
    assert "no plain-rule form" in text  # the copy rules say how they are written
    assert "regex Model;" in text


# ----------------------------------------------------------------------------- drawings


def test_dot_is_laid_out_by_graphviz_with_token_labels(plural: Path, tmp_path: Path) -> None:
    require("dot")
    out = tmp_path / "plural.dot"
    assert cli("export", str(plural), "--format", "dot", "-o", str(out)).exit_code == 0
    svg = run(["dot", "-Tsvg", str(out)], tmp_path)
    assert "<svg" in svg and "ɪ:ɪ" in svg and "&lt;eps&gt;:s" in svg


def test_svg_export(plural: Path, tmp_path: Path) -> None:
    require("dot")
    out = tmp_path / "plural.svg"
    result = cli("export", str(plural), "--format", "svg", "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "ɪ:ɪ" in text


def test_svg_without_graphviz_is_a_clear_error(plural: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    result = cli("export", str(plural), "--format", "svg", "-o", str(tmp_path / "x.svg"))
    assert result.exit_code == 2
    assert "graphviz" in result.output.lower() and not (tmp_path / "x.svg").exists()


def test_too_big_to_draw_is_a_clear_error(plural: Path, tmp_path: Path) -> None:
    from exporters.dot import Error, to_dot

    composed = load_model(plural).pair().transducers().composed()
    with pytest.raises(Error, match="too many to draw"):
        to_dot(composed, max_states=2)
    with pytest.raises(Error, match=r"states and \d+ arcs, too many to draw .*fstsynth report"):
        to_dot(composed, max_arcs=10)


def _saved_model(program: Program, alphabet: tuple[str, ...], path: Path) -> Path:
    """A model of one column pair compiled from a hand-written program, saved."""
    from fstsynth.learning import saved_options
    from fstsynth.model import Model, PairModel
    from fstsynth.model_file import save_model
    from fstsynth.synthesis import Options

    compiled = compile_program(program, alphabet, {})
    pair = PairModel(0, 1, program, 0.0, 0, 0, compiled.tables(), compiled.transducers, alphabet=alphabet)
    save_model(Model(("source", "target"), {}, saved_options(Options()), alphabet, {(0, 1): pair}), path)
    return path


def _cpu_seconds() -> float:
    """The CPU time of this process and of the children it has waited for (Graphviz)."""
    import resource

    usages = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    return sum(usage.ru_utime + usage.ru_stime for usage in usages)


def test_a_drawing_of_thousands_of_arcs_is_refused_at_once_naming_report(tmp_path: Path) -> None:
    """Issue 26: `export --format svg` of a 3,503-arc model ran Graphviz for over ten
    minutes with no message. A model of that size is now refused with one line."""
    from fstsynth.transducers import arc_count

    letters = tuple("abcdefghijklmnopqrstuvwxyz")
    rules = tuple(
        Rule((IsToken(letters[k], -1), IsToken(letters[(3 * k + 1) % 26], 1), IsToken(letters[(5 * k + 2) % 26], 2)),
             ReplaceBy(letters[(5 * k + 2) % 26], (letters[k],)))
        for k in range(26)
    )
    alphabet = letters + tuple(f"x{k}" for k in range(20))
    model = _saved_model(Program((Pass(rules),)), alphabet, tmp_path / "model")
    assert 3000 < arc_count(load_model(model).pair().transducers().composed()) < 4000
    for fmt in ("svg", "dot"):
        out = tmp_path / f"drawing.{fmt}"
        started = _cpu_seconds()  # CPU, not wall time: a loaded machine stretches the latter
        result = cli("export", str(model), "--format", fmt, "-o", str(out))
        assert _cpu_seconds() - started < 30
        assert result.exit_code == 2 and "too many to draw" in result.output and "fstsynth report" in result.output
        assert len(result.output.strip().splitlines()) == 1 and not out.exists()


def test_graphviz_is_stopped_at_the_time_limit_with_a_message() -> None:
    """A layout Graphviz cannot finish in time is stopped (it is not left running)."""
    from fstsynth.drawing import Error, to_svg

    require("dot")
    # A dense graph: dot needs far longer than the limit to lay it out.
    edges = "".join(f"n{a} -> n{(a * 7 + b * 13) % 300} [label=\"{a}:{b}\"];\n" for a in range(300) for b in range(10))
    started = time.monotonic()
    with pytest.raises(Error, match=r"did not lay out the drawing within 0.5 s; .*fstsynth report"):
        to_svg("digraph G {\n" + edges + "}\n", time_limit=0.5)
    assert time.monotonic() - started < 10


def test_the_library_never_imports_the_exporters() -> None:
    """Exporters only export: the SPE view and SVG rendering the library uses live in
    the package. Only the CLI's `export` command (the top layer) imports exporters."""
    import ast

    importers = []
    for path in sorted((ROOT / "fstsynth").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name == "exporters" or name.startswith("exporters."):
                    importers.append((path.relative_to(ROOT).as_posix(), name))
    assert importers == [("fstsynth/cli.py", "exporters.export")]


# ----------------------------------------------------------------------------- CLI


def test_export_errors_are_one_line_exit_2(paradigm: Path, tmp_path: Path) -> None:
    result = cli("export", str(paradigm), "--format", "att", "-o", str(tmp_path / "x.att"))
    assert result.exit_code == 2 and "--source/--target" in result.output
    result = cli("export", str(paradigm), "--format", "pdf", "-o", str(tmp_path / "x"))
    assert result.exit_code == 2 and "unknown export format 'pdf'" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_show_spe(plural: Path) -> None:
    result = cli("show", str(plural), "--format", "spe")
    assert result.exit_code == 0, result.output
    pm = load_model(plural).pair()
    for rule in pm.program.passes[0].rules:
        assert rule_to_spe(rule) in result.output
    assert "/" in result.output and "_" in result.output and "IfThen" not in result.output
    assert "IfThen" in cli("show", str(plural)).output  # dsl stays the default
    assert cli("show", str(plural), "--format", "xml").exit_code == 2


@pytest.mark.parametrize(
    "rule, spe",
    [
        (Rule((IsToken(BOUNDARY, 1), Is("voice", 0)), Insert(("z",))), "∅ -> z / [+voice] _ #"),
        (Rule((IsToken(BOUNDARY, 0),), Insert(("d", "i"))), "∅ -> d i / # _"),
        (Rule((Is("vowel", -1), Is("vowel", 1)), ReplaceBy("t", ("d",))), "t -> d / [+vowel] _ [+vowel]"),
        (Rule((IsToken("n", 1),), Delete()), "X -> ∅ / _ n"),
        (Rule((Not(Is("voice", 1)), Is("cons", 0)), CopyReplace(-1)), "[+cons] -> ⟨-1⟩ / _ {[-voice], #}"),
        (Rule((Is("vowel", 0), TierIs("vowel", BOUNDARY, 1)), Identity()),
         "[+vowel] -> [+vowel]   ‖ vowel tier: _ #   (no change; blocks the rules below)"),
        (Rule((IsToken("n", 1), TierIs("vowel", "long", -1), Not(TierIs("vowel", "high", 2)),
               Not(TierIs("cons", BOUNDARY, 1))), Delete()),
         "X -> ∅ / _ n   ‖ vowel tier: [+long] _ X {[-high], #}; cons tier: _ X"),
    ],
)
def test_rule_to_spe(rule: Rule, spe: str) -> None:
    assert rule_to_spe(rule) == spe


def test_apply_trace_shows_passes_and_rules(plural: Path) -> None:
    result = cli("apply", str(plural), "--trace", "b ʌ s", "k a t")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "b ʌ s ɪ z"
    assert "  input:  b ʌ s" in lines and "  pass 1: b ʌ s ɪ z" in lines
    assert any(line.startswith("    at 3 (s): rule ") and line.endswith("=>  s ɪ z") for line in lines)
    assert "k a t s" in lines


def test_derivation_names_the_start_position() -> None:
    program = Program((Pass((Rule((IsToken(BOUNDARY, 0),), Insert(("d", "i"))),)),))
    lines = derivation(program, ("b", "a"), {})
    assert lines == ["input:  b a", "pass 1: d i b a", "  at start: rule 1, ∅ -> d i / # _  =>  d i"]

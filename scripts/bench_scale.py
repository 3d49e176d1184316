"""Scale in data: learning curves on a real rule-governed mapping with plenty of data.

Spelling -> IPA pairs made by `epitran` (a language with regular orthography, Spanish
by default) for words from `wordfreq`'s list (both ship their data; install the
benchmark extra: `pip install '.[bench]'`). Source tokens are letters, target tokens
epitran's IPA segments. For each training size N: learning time (alignment and
synthesis), compile time, the stage transducers' states/arcs (what the model keeps for
exports; `--composed` also times and measures their composition, which only a composed
export builds), and Exact on held-out words
(predicted with the apply tables; a sample is also run through the interpreter and
every difference counted). Learning time is also given per 1,000 pairs, so growth
faster than linear shows as a rising column.

Targets: learning time no worse than about linear (10,000 pairs under 60 s), Exact at
least 99% by 1,000 pairs.

    python scripts/bench_scale.py --sizes 30 100 300 1000 3000 10000 --json /tmp/bench_scale.json
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchutil import table, write_json  # noqa: E402

from fstsynth.features import with_vowel_classes  # noqa: E402
from fstsynth.compiler import arc_count, compile_program  # noqa: E402
from fstsynth.interpreter import run  # noqa: E402
from fstsynth.synthesis import Options, learn  # noqa: E402

Word = tuple[str, ...]


def make_pairs(lang: str, code: str, count: int, seed: int) -> list[tuple[Word, Word]]:
    """`count` distinct (letters, IPA segments) pairs of common words, shuffled (seeded)."""
    import epitran
    import wordfreq

    epi = epitran.Epitran(code)
    pairs: dict[str, tuple[Word, Word]] = {}
    for word in wordfreq.top_n_list(lang, count * 4):
        word = unicodedata.normalize("NFC", word.lower())
        if len(word) < 2 or not word.isalpha() or word in pairs:
            continue
        # epitran writes some segments decomposed (a + combining tilde): tokens are
        # compared after NFC, as problem files are read.
        ipa = tuple(unicodedata.normalize("NFC", seg) for seg in epi.trans_list(word))
        if not ipa:
            continue
        pairs[word] = (tuple(word), ipa)
    out = sorted(pairs.values())
    random.Random(seed).shuffle(out)
    if len(out) < count:
        raise SystemExit(f"only {len(out)} usable words for {lang}; asked for {count}")
    return out[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lang", default="es", help="wordfreq language code")
    parser.add_argument("--epitran", default="spa-Latn", help="epitran language-script code")
    parser.add_argument("--sizes", type=int, nargs="*", default=[30, 100, 300, 1000, 3000, 10000])
    parser.add_argument("--heldout", type=int, default=2000)
    parser.add_argument("--check-sample", type=int, default=300, help="held-out words also run by the interpreter")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes for the cross-validation folds")
    parser.add_argument("--json", default="bench_scale.json")
    parser.add_argument("--composed", action="store_true", help="also compose the passes (export) and measure it")
    args = parser.parse_args()

    pairs = make_pairs(args.lang, args.epitran, max(args.sizes) + args.heldout, args.seed)
    heldout, pool = pairs[: args.heldout], pairs[args.heldout :]
    rows, results = [], []
    for n in args.sizes:
        train = pool[:n]
        alphabet = sorted({t for s, tgt in pairs for t in (*s, *tgt)})
        # As `learn_model` does for a table without a feature table: vowel/consonant
        # classes derived from Unicode.
        features = with_vowel_classes({}, alphabet)
        started = time.perf_counter()
        result = learn(train, features, Options(), jobs=args.jobs)
        t_learn = time.perf_counter() - started
        started = time.perf_counter()
        compiled = compile_program(result.program, alphabet, features)
        t_compile = time.perf_counter() - started
        started = time.perf_counter()
        predictions = compiled.tables().apply_many([s for s, _ in heldout])
        t_predict = time.perf_counter() - started
        exact = sum(p == tgt for p, (_, tgt) in zip(predictions, heldout)) / len(heldout)
        sample = heldout[: args.check_sample]
        mismatches = sum(
            run(result.program, compiled.map_unknown(s), features) != p for (s, _), p in zip(sample, predictions)
        )
        states = sum(fst.num_states() for fst in compiled.transducers.stages)
        arcs = sum(map(arc_count, compiled.transducers.stages))
        composed: dict[str, float | int] = {}
        if args.composed:
            started = time.perf_counter()
            fst = compiled.transducers.composed()
            composed = {
                "composed_s": time.perf_counter() - started,
                "composed_states": fst.num_states(),
                "composed_arcs": arc_count(fst),
            }
        r = {
            "n": n,
            "learn_s": t_learn,
            "alignment_s": result.seconds.get("alignment", 0.0),
            "synthesis_s": result.seconds.get("synthesis", 0.0),
            "learn_s_per_1000": t_learn / n * 1000,
            "compile_s": t_compile,
            "states": states,
            "arcs": arcs,
            **composed,
            "rules": result.program.rule_count,
            "passes": len(result.program.passes),
            "train_correct": result.train_correct / n,
            "heldout_exact": exact,
            "predict_s": t_predict,
            "interpreter_mismatches": mismatches,
            "checked": len(sample),
        }
        results.append(r)
        rows.append([
            n, t_learn, r["alignment_s"], r["synthesis_s"], r["learn_s_per_1000"], t_compile,
            states, arcs, r["rules"], f"{100 * r['train_correct']:.1f}%", f"{100 * exact:.2f}%",
            f"{mismatches}/{len(sample)}",
        ])
        # Each size as it completes, so that a run cut short still tells something.
        print(
            f"done N={n}: learn {t_learn:.1f}s (synthesis {r['synthesis_s']:.1f}s), compile "
            f"{t_compile:.1f}s, {r['rules']} rules, held-out exact {100 * exact:.2f}%, "
            f"mismatches {mismatches}/{len(sample)}",
            file=sys.stderr,
            flush=True,
        )
    print(f"learning curve: {args.lang} spelling -> IPA by epitran {args.epitran}; {args.heldout:,} held-out words")
    print(table(
        ["N", "learn s", "align", "synth", "s/1k pairs", "compile s", "states", "arcs", "rules",
         "train", "held-out exact", "mismatch"],
        rows,
    ))
    write_json(args.json, {"benchmark": "scale", "lang": args.lang, "epitran": args.epitran,
                           "heldout": args.heldout, "jobs": args.jobs, "results": results})


if __name__ == "__main__":
    main()

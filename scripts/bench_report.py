#!/usr/bin/env python3
"""Size and time of `fstsynth report` for models learned from N pairs.

Spelling -> IPA pairs made as `bench_scale.py` makes them (epitran and wordfreq: install
the benchmark extra, `pip install '.[bench]'`). For each N: the time to learn the model
(for the record), then the time to write the report (tracing every training word
through the interpreter, predicting them all, drawing the small passes with Graphviz)
and the report's size in bytes, with its number of rules and drawings.

The report is meant to be opened in a browser and passed around: a 1,000-pair model's
report should stay a few megabytes at most and take seconds, not minutes.

    python scripts/bench_report.py --sizes 100 1000 --json /tmp/bench_report.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_scale import make_pairs  # noqa: E402
from benchutil import table, write_json  # noqa: E402

from fstsynth.learning import learn_model  # noqa: E402
from fstsynth.problem import problem_from_pairs  # noqa: E402
from fstsynth.report import report_html  # noqa: E402
from fstsynth.synthesis import Options  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lang", default="es", help="wordfreq language code")
    parser.add_argument("--epitran", default="spa-Latn", help="epitran language-script code")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variant", default=Options().variant, help="learning variant (default: auto)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    rows = []
    for size in args.sizes:
        pairs = make_pairs(args.lang, args.epitran, size, args.seed)
        problem = problem_from_pairs([(" ".join(s), " ".join(t)) for s, t in pairs], name=f"{args.lang}-{size}")
        started = time.perf_counter()
        model = learn_model(problem, Options(variant=args.variant))
        learned = time.perf_counter() - started
        started = time.perf_counter()
        page = report_html(model)
        seconds = time.perf_counter() - started
        pm = model.pair()
        rows.append({
            "pairs": size,
            "rules": pm.program.rule_count,
            "passes": len(pm.program.passes),
            "drawings": page.count("<svg"),
            "learn_s": learned,
            "report_s": seconds,
            "report_bytes": len(page.encode("utf-8")),
        })
        print(f"{size} pairs: report {rows[-1]['report_bytes']:,} bytes in {seconds:.1f} s", file=sys.stderr)
    headers = ["pairs", "rules", "passes", "drawings", "learn_s", "report_s", "report_bytes"]
    print(table(headers, [[r[h] for h in headers] for r in rows]))
    if args.json:
        write_json(args.json, {"lang": args.lang, "seed": args.seed, "variant": args.variant, "rows": rows})


if __name__ == "__main__":
    main()

"""Learning and compiling on the dev split: fstsynth's solve vs the Phonetisaurus peer.

For every problem of the dev split (default options, interpreter check on):
  - fstsynth: `solve_problem(problem, check=True)`, wall time split into alignment,
    synthesis, compilation and prediction (prediction includes the interpreter check),
    the slowest single compilation, interpreter/transducer mismatches, Exact;
  - the peer: Phonetisaurus trained per column pair on the same training rows and
    decoding the same test cells from the same source column fstsynth used (cells
    fstsynth had no program for are skipped by both), wall time and Exact.
Peak memory: this process's maximum resident set (fstsynth runs in-process), and the
largest peer process's, measured by GNU time (/usr/bin/time) when installed: the
parent's RUSAGE_CHILDREN counted the pages a child shares with this process before it
execs the peer binary (it reported this process's size). GNU time adds about a
millisecond to each peer run.
Targets: fstsynth's total within 3x the peer's, peak under 1 GB, no compile over 2 s.

    python scripts/bench_solve.py --json /tmp/bench_solve.json
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchutil import DEV, table, write_json  # noqa: E402
from peer_phonetisaurus import Peer  # noqa: E402

from fstsynth.problem import load_problem  # noqa: E402
from fstsynth.solve import solve_problem  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dev", type=Path, default=DEV, help="the dev split (problems/ and solutions/)")
    parser.add_argument("--only", nargs="*", help="problem names to run (default: all)")
    parser.add_argument("--json", default="bench_solve.json", help="where to write the figures")
    args = parser.parse_args()

    paths = sorted((args.dev / "problems").glob("*.json"))
    if args.only:
        paths = [p for p in paths if p.stem in args.only]
    rows, results = [], []
    peer_peak_kib: int | None = None  # the largest peer process (see Peer.peak_kib)
    totals: dict[str, float] = defaultdict(float)
    for path in paths:
        problem = load_problem(path)
        solution = load_problem(args.dev / "solutions" / path.name)

        started = time.perf_counter()
        report = solve_problem(problem, check=True)
        wall = time.perf_counter() - started
        parts = {k: report.seconds.get(k, 0.0) for k in ("alignment", "synthesis", "compilation", "predict")}
        compiles = [pm.seconds.get("compilation", 0.0) for pm in (report.model.pairs.values() if report.model else [])]
        worst = max(compiles, default=0.0)
        scored = [a for a in report.answers if a.source is not None]
        exact = sum(a.word == solution.cells[a.row][a.column] for a in scored)

        by_pair: dict[tuple[int, int], list] = defaultdict(list)
        for a in scored:
            by_pair[(a.source, a.column)].append(a)
        started = time.perf_counter()
        peer_exact, peer_failed = 0, 0
        for (s, t), answers in sorted(by_pair.items()):
            peer = Peer()
            try:
                preds = peer.run(problem.training_pairs(s, t), [problem.cells[a.row][s] for a in answers])
            except subprocess.CalledProcessError:
                preds = [None] * len(answers)
                peer_failed += 1
            peer_exact += sum(p == solution.cells[a.row][a.column] for p, a in zip(preds, answers))
            if peer.peak_kib is not None:
                peer_peak_kib = max(peer_peak_kib or 0, peer.peak_kib)
        peer_wall = time.perf_counter() - started

        r = {
            "problem": path.stem,
            "pairs": len(compiles),
            "cells": len(scored),
            "fstsynth_s": wall,
            **{f"{k}_s": v for k, v in parts.items()},
            "worst_compile_s": worst,
            "rules_max": (
                max((pm.program.rule_count for pm in report.model.pairs.values()), default=0) if report.model else 0
            ),
            "mismatches": len(report.mismatches),
            "fstsynth_exact": exact,
            "peer_s": peer_wall,
            "peer_exact": peer_exact,
            "peer_failed_pairs": peer_failed,
        }
        results.append(r)
        for k in ("fstsynth_s", "alignment_s", "synthesis_s", "compilation_s", "predict_s", "peer_s"):
            totals[k] += r[k]
        totals["mismatches"] += r["mismatches"]
        totals["cells"] += r["cells"]
        totals["fstsynth_exact"] += exact
        totals["peer_exact"] += peer_exact
        rows.append([
            path.stem, r["pairs"], r["rules_max"], wall, parts["alignment"], parts["synthesis"],
            parts["compilation"], worst, parts["predict"], peer_wall,
            f"{wall / peer_wall:.1f}x" if peer_wall else "-",
            f"{exact}/{len(scored)}", f"{peer_exact}/{len(scored)}", r["mismatches"],
        ])
        print(f"done {path.stem}", file=sys.stderr, flush=True)

    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB
    peak_peer = None if peer_peak_kib is None else peer_peak_kib / 1024
    ratio = totals["fstsynth_s"] / totals["peer_s"] if totals["peer_s"] else float("inf")
    worst_all = max((r["worst_compile_s"] for r in results), default=0.0)
    rows.append([
        "TOTAL", sum(r["pairs"] for r in results), max((r["rules_max"] for r in results), default=0),
        totals["fstsynth_s"], totals["alignment_s"], totals["synthesis_s"], totals["compilation_s"],
        worst_all, totals["predict_s"], totals["peer_s"], f"{ratio:.1f}x",
        f"{int(totals['fstsynth_exact'])}/{int(totals['cells'])}",
        f"{int(totals['peer_exact'])}/{int(totals['cells'])}", int(totals["mismatches"]),
    ])
    print("solve on the dev split (seconds, wall); predict includes the interpreter check")
    print(table(
        ["problem", "pairs", "rules", "fstsynth", "align", "synth", "compile", "worst cmp",
         "predict", "peer", "ratio", "exact", "peer exact", "mism"],
        rows,
    ))
    peer_memory = "not measured (no /usr/bin/time)" if peak_peer is None else f"{peak_peer:.0f} MiB"
    print(f"peak memory: fstsynth process {peak_self:.0f} MiB; largest peer process {peer_memory}")
    print(f"fstsynth/peer time ratio {ratio:.2f} (target <= 3); slowest compile {worst_all:.2f}s (target <= 2)")
    write_json(args.json, {
        "benchmark": "solve",
        "results": results,
        "totals": dict(totals),
        "ratio_fstsynth_to_peer": ratio,
        "worst_compile_s": worst_all,
        "peak_rss_mib": peak_self,
        "peer_peak_rss_mib": peak_peer,
    })


if __name__ == "__main__":
    main()

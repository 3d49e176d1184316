"""Self-consistency at scale: learn back seeded random programs from the pairs they make.

For each seed: a random program in the DSL (`fstsynth.random_programs`), N training
words and H held-out words (random words over its alphabet); the pairs are made by the
interpreter; the learner (default options, the generator's features) gets the training
pairs. Reported per setting: the share of programs whose learned program reproduces
every training pair, the share that also agrees on every held-out word, the mean
held-out agreement, and learning time (mean and worst).

    python scripts/bench_selfcheck.py --programs 100 --json /tmp/bench_selfcheck.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchutil import table, write_json  # noqa: E402

from fstsynth.random_programs import learn_back  # noqa: E402

SETTINGS = {
    # name: (passes, max_rules, max_conjuncts)
    "1 pass, <=2 rules, <=1 conjunct": (1, 2, 1),
    "1 pass, <=4 rules, <=2 conjuncts": (1, 4, 2),
    "2 passes, <=3 rules, <=2 conjuncts": (2, 3, 2),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--programs", type=int, default=100, help="random programs per setting")
    parser.add_argument("--train", type=int, default=80, help="training pairs per program")
    parser.add_argument("--heldout", type=int, default=300, help="held-out words per program")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--json", default="bench_selfcheck.json")
    args = parser.parse_args()

    rows, results = [], {}
    for name, (passes, max_rules, max_conj) in SETTINGS.items():
        runs = [
            learn_back(args.seed + k, passes=passes, max_rules=max_rules, max_conjuncts=max_conj,
                       n_train=args.train, n_heldout=args.heldout)
            for k in range(args.programs)
        ]
        results[name] = runs
        times = [r["seconds"] for r in runs]
        rows.append([
            name,
            len(runs),
            f"{100 * sum(r['train_reproduced'] for r in runs) / len(runs):.0f}%",
            f"{100 * sum(r['train_reproduced'] and r['heldout_agreement'] == 1 for r in runs) / len(runs):.0f}%",
            f"{100 * statistics.mean(r['heldout_agreement'] for r in runs):.1f}%",
            statistics.mean(times),
            max(times),
        ])
        print(f"done {name}", file=sys.stderr, flush=True)
    print(f"self-consistency: {args.train} training pairs, {args.heldout} held-out words per program")
    print(table(["setting", "programs", "reproduces train", "+ all held-out", "held-out agreement",
                 "mean s", "max s"], rows))
    write_json(args.json, {"benchmark": "selfcheck", "train": args.train, "heldout": args.heldout,
                           "results": results})


if __name__ == "__main__":
    main()

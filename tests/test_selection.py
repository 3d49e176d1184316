"""Choosing among the paper's variants by cross-validation (`variant="auto"`); and, at the
end, the pass selection's bookkeeping (`selection._select`) against rescoring."""

from __future__ import annotations

import random

import pytest

from fstsynth.interpreter import run
from fstsynth.synthesis import Options, learn

VOICED = "b d g v z"
VOICELESS = "p t k f s"
FEATURES = {
    **{c: {"vowel": False, "voice": True} for c in VOICED.split()},
    **{c: {"vowel": False, "voice": False} for c in VOICELESS.split()},
    "a": {"vowel": True, "voice": True},
    "o": {"vowel": True, "voice": True},
}
# The suffix agrees in voicing; every row ends in a different consonant, so a rule
# naming tokens cannot predict a held-out row, and a rule naming the feature can.
PAIRS = [
    (("a", c), ("a", c, "z" if c in VOICED.split() else "s"))
    for c in "b d g v p t k f".split()
] + [(("o", "a", c), ("o", "a", c, "z" if c in VOICED.split() else "s")) for c in "b t".split()]


def test_auto_picks_the_variant_that_generalizes_to_held_out_rows():
    result = learn(PAIRS, FEATURES, Options(variant="auto"))
    # token and feature both find the voicing rule here and cross-validate perfectly;
    # the tie goes to token. nofeature lists consonants and fails on unseen ones.
    assert result.variant == "token"
    assert result.held_out == 1.0
    assert run(result.program, ("o", "s"), FEATURES) == ("o", "s", "s")
    nofeature = learn(PAIRS, FEATURES, Options(variant="nofeature"))
    assert nofeature.held_out is None and nofeature.variant == "nofeature"
    assert run(nofeature.program, ("o", "s"), FEATURES) != ("o", "s", "s")


def test_auto_is_deterministic():
    first = learn(PAIRS, FEATURES, Options(variant="auto"))
    second = learn(list(PAIRS), FEATURES, Options(variant="auto"))
    assert first.program == second.program and first.held_out == second.held_out


def test_model_file_keeps_the_chosen_variant_and_held_out_share(tmp_path):
    from conftest import DATA
    from fstsynth.learning import learn_model
    from fstsynth.model_file import load_model, save_model
    from fstsynth.problem import load_problem

    problem = load_problem(DATA / "paradigm.json")
    pairs = problem.column_pairs()[:1]
    model = learn_model(problem, Options(tiers=False), pairs=pairs)
    save_model(model, tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    assert loaded.options == model.options
    for key, pm in model.pairs.items():
        assert pm.variant in ("token", "feature") and pm.held_out is not None
        assert (loaded.pairs[key].variant, loaded.pairs[key].held_out) == (pm.variant, pm.held_out)


def hits(right: int, rows: int) -> tuple[bool, ...]:
    """A fold's result for a fake `split_hits`: the first `right` of `rows` held-out rows right."""
    return (True,) * right + (False,) * (rows - right)


def _folds(pairs, k):
    return [
        ([p for i, p in enumerate(pairs) if i % k != fold], [p for i, p in enumerate(pairs) if i % k == fold])
        for fold in range(k)
    ]


def _auto_by_full_runs(pairs, features, options, cv_pairs=None, splits=None):
    """`auto` written out: every variant tried is cross-validated (the folds read
    `cv_pairs`, default all rows, or the (train, test) `splits` given), the
    one-standard-error rule picks one, which learns from all rows; without folds every
    variant learns from all rows and the shortest program wins. The program chosen ends
    with the prefix's elsewhere case where every target has a prefix no source has."""
    import math
    from dataclasses import replace

    from fstsynth.dsl import Program
    from fstsynth.synthesis.affixes import AFFIX_LENGTH, every_prefix, prefix_default_pass
    from fstsynth.synthesis.auto import AUTO_ORDER
    from fstsynth.synthesis.variant import forms_of_words, learn_variant

    def with_default(program):
        prefix = every_prefix(all_pairs) if forms_of_words(all_pairs) else ()
        return Program((*program.passes, prefix_default_pass(prefix))) if prefix else program

    all_pairs, pairs = pairs, pairs if cv_pairs is None else cv_pairs
    k = min(options.folds, len(pairs))
    if splits is None:
        splits = _folds(pairs, k) if k >= 2 else []
    tested = sum(len(test) for _, test in splits)
    if not splits:
        results = [learn_variant(all_pairs, features, replace(options, variant=v)) for v in AUTO_ORDER]
        rank = min(range(len(results)), key=lambda r: (results[r].program.rule_count, r))
        return with_default(results[rank].program), AUTO_ORDER[rank], None
    def cross_validate(opts):
        held, rules = 0, []
        for train, test in splits:
            part = learn_variant(train, features, opts)
            held += sum(run(part.program, src, features) == tgt for src, tgt in test)
            rules.append(part.program.rule_count)
        return held, rules

    def one_standard_error(scores):
        most = max(held for held, _ in scores)
        band = math.sqrt(most * (tested - most) / tested)
        within = [r for r, (held, _) in enumerate(scores) if held >= most - band]
        shortest = min(within, key=lambda r: (sum(scores[r][1]), r))
        shortest_rules = scores[shortest][1]
        rank = min(
            r for r in within
            if not (all(a <= b for a, b in zip(shortest_rules, scores[r][1])) and shortest_rules != scores[r][1])
        )
        return rank, within, most + band

    scores = []  # (held-out rows right, rules of each split's program)
    configs = [replace(options, variant=variant) for variant in AUTO_ORDER]
    for config in configs:
        scores.append(cross_validate(config))
    most = max(held for held, _ in scores)
    affixed = None
    if most < tested and forms_of_words(all_pairs):
        # The whole-affix pass first, with the variant ahead: taken below only where it
        # predicts more held-out rows than every other beyond one standard error.
        affix_options = replace(configs[[held for held, _ in scores].index(most)], affixes=AFFIX_LENGTH)
        affixed = (affix_options, cross_validate(affix_options))
    rank, within, beyond = one_standard_error(scores)
    chosen = configs[rank]
    every_held = [held for held, _ in scores]
    if options.chunks == "cv" and max(held for held, _ in scores) < tested:
        # Each configuration within the band is tried aligned by chunks; the best of
        # those (by the same rule) is taken where it predicts more held-out rows beyond
        # one standard error, or as many (some) with fewer rules on every split.
        chunked = [replace(configs[r], chunks="on") for r in within]
        chunk_scores = [cross_validate(opts) for opts in chunked]
        best, _, _ = one_standard_error(chunk_scores)
        (held, rules), (word_held, word_rules) = chunk_scores[best], scores[rank]
        every_held += [held for held, _ in chunk_scores]
        if held > beyond or (held >= word_held > 0 and all(a < b for a, b in zip(rules, word_rules))):
            chosen, scores, rank = chunked[best], chunk_scores, best
    others = max(every_held)
    if affixed is not None and affixed[1][0] > others + math.sqrt(others * (tested - others) / tested):
        chosen, scores, rank = affixed[0], [affixed[1]], 0
    result = learn_variant(all_pairs, features, chosen)
    return with_default(result.program), chosen.variant, scores[rank][0] / tested


@pytest.mark.parametrize("order", [("token", "feature"), ("nofeature", "feature")])
def test_auto_learns_from_all_rows_only_for_the_variants_that_can_win(monkeypatch, order):
    # Same choice as learning from all rows with every variant tried. With nofeature
    # first, the variants differ on held-out rows (nofeature cannot name a voicing).
    from conftest import DATA
    from fstsynth.problem import load_problem
    from fstsynth.synthesis import auto

    monkeypatch.setattr(auto, "AUTO_ORDER", order)

    problem = load_problem(DATA / "paradigm.json")
    cases = [(PAIRS, FEATURES), (PAIRS[:1], FEATURES)] + [
        (problem.training_pairs(s, t), {}) for s, t in problem.column_pairs()
    ]
    for pairs, features in cases:
        options = Options(variant="auto", tiers=False)
        result = learn(pairs, features, options)
        assert (result.program, result.variant, result.held_out) == _auto_by_full_runs(
            pairs, features, options
        )


def test_auto_in_worker_processes_learns_the_same():
    from conftest import DATA
    from fstsynth.problem import load_problem

    problem = load_problem(DATA / "paradigm.json")
    for pairs, features in [(PAIRS, FEATURES)] + [
        (problem.training_pairs(s, t), {}) for s, t in problem.column_pairs()[:2]
    ]:
        one = learn(pairs, features, Options(tiers=False))
        two = learn(pairs, features, Options(tiers=False), jobs=2)
        assert (two.program, two.variant, two.held_out) == (one.program, one.variant, one.held_out)


def test_auto_cross_validates_on_at_most_cv_rows_evenly_spaced_rows():
    from conftest import DATA
    from fstsynth.problem import load_problem
    from fstsynth.synthesis import Error

    problem = load_problem(DATA / "paradigm.json")
    cases = [(PAIRS, FEATURES)] + [(problem.training_pairs(s, t), {}) for s, t in problem.column_pairs()[:2]]
    for pairs, features in cases:
        # Too few rows for a fold's training rows and cv_rows more: folds of cv_rows rows.
        rows = len(pairs) - 1
        assert len(pairs) < rows * 2 // 3 + rows
        options = Options(variant="auto", tiers=False, cv_rows=rows)
        result = learn(pairs, features, options)
        sample = [pairs[i * len(pairs) // rows] for i in range(rows)]
        assert (result.program, result.variant, result.held_out) == _auto_by_full_runs(
            pairs, features, options, cv_pairs=sample
        )
        assert result.train_total == len(pairs)  # the program is learned from every row
    with pytest.raises(Error, match="cv_rows"):
        Options(cv_rows=2)


def test_auto_with_rows_to_spare_learns_once_per_variant_and_predicts_the_other_rows():
    from conftest import DATA
    from fstsynth.problem import load_problem

    problem = load_problem(DATA / "paradigm.json")
    cases = [(PAIRS, FEATURES)] + [(problem.training_pairs(s, t), {}) for s, t in problem.column_pairs()[:2]]
    for pairs, features in cases:
        # Room for a fold's training rows (2/3 of cv_rows) and cv_rows more: one split,
        # the training rows evenly spaced, every other row predicted (at most 3 cv_rows).
        rows = len(pairs) // 2
        train_rows = rows * 2 // 3
        options = Options(variant="auto", tiers=False, cv_rows=rows)
        chosen = [i * len(pairs) // train_rows for i in range(train_rows)]
        train = [pairs[i] for i in chosen]
        test = [p for i, p in enumerate(pairs) if i not in chosen]
        assert len(test) <= 3 * rows
        result = learn(pairs, features, options)
        assert (result.program, result.variant, result.held_out) == _auto_by_full_runs(
            pairs, features, options, splits=[(train, test)]
        )


@pytest.mark.parametrize(
    "scores, chosen, held_out",
    [
        # 74 vs 72 of 100 held-out rows: one standard error at 74% is 4.4 rows, so
        # the two generalize alike and the shorter programs (feature's) win.
        ({"token": (74, 40), "feature": (72, 30)}, "feature", 0.72),
        # 5 rows behind is more than 4.4: the better one wins, longer or not.
        ({"token": (74, 40), "feature": (69, 30)}, "token", 0.74),
        # Clearly better (90 vs 72; one standard error is 3 rows).
        ({"token": (90, 40), "feature": (72, 30)}, "token", 0.90),
        # Within the band, the shorter wins whichever is ahead.
        ({"token": (70, 25), "feature": (73, 30)}, "token", 0.70),
        # Within the band and as short: a row or two ahead is noise, the earlier wins.
        ({"token": (95, 85), "feature": (96, 85)}, "token", 0.95),
        ({"token": (73, 30), "feature": (70, 30)}, "token", 0.73),
        # Split by split (three splits of 100 rows): more rules on one split is not
        # clearly shorter, the earlier wins; no more on any split and fewer on some is.
        ({"token": (73, [94, 97, 82]), "feature": (74, [92, 90, 77])}, "feature", 0.74),
        ({"token": (73, [90, 97, 81]), "feature": (74, [92, 90, 77])}, "token", 0.73),
        ({"token": (73, [4, 3, 6]), "feature": (74, [4, 3, 3])}, "feature", 0.74),
        ({"token": (73, [4, 3, 6]), "feature": (74, [4, 3, 6])}, "token", 0.73),
    ],
)
def test_auto_prefers_the_clearly_shorter_program_within_one_standard_error(monkeypatch, scores, chosen, held_out):
    # Hand-set held-out counts (of 100 rows per split) and rules of the cross-validation
    # programs for each variant (one split, or one count per split); the program from
    # all rows is then learned for real.
    from fstsynth.synthesis import auto

    def rules_of(variant):
        rules = scores[variant][1]
        return rules if isinstance(rules, list) else [rules]

    splits = len(rules_of("token"))
    monkeypatch.setattr(auto, "AUTO_ORDER", ("token", "feature"))
    monkeypatch.setattr(
        auto, "cv_splits", lambda pairs, k, rows: [(list(pairs), [split] * 100) for split in range(splits)]
    )

    def fold(train, test, features, options, deadline):
        return auto.SplitScore(hits(scores[options.variant][0], len(test)), {}, rules_of(options.variant)[test[0]])

    monkeypatch.setattr(auto, "split_hits", fold)
    result = learn(PAIRS, FEATURES, Options(variant="auto", tiers=False))
    assert (result.variant, result.held_out) == (chosen, held_out)



@pytest.mark.parametrize(
    "chunk_scores, held_out",
    [
        # Held-out rows right on each of 3 splits of 100 rows and rules of each split's
        # program, of the chunk tries; word by word, token has 78 (chosen) and feature 75
        # (within one standard error, 7.6 rows: both are tried aligned by chunks).
        # As many held-out rows or more, fewer rules on every split: the chunk alignment.
        ({"token": (27, [19, 12, 23]), "feature": (25, [19, 12, 23])}, 81),
        # Fewer rules on some splits only: what the alignment does to a program's length.
        ({"token": (27, [27, 22, 23]), "feature": (25, [27, 22, 23])}, 78),
        # Beyond one standard error of the best word by word: taken, longer or not.
        ({"token": (29, [30, 30, 30]), "feature": (25, [30, 30, 30])}, 87),
        # Within it and behind: word by word, however short.
        ({"token": (25, [10, 10, 10]), "feature": (20, [10, 10, 10])}, 78),
        # The best chunk try by the one-standard-error rule is the one compared: here
        # feature's (within the band of token's, and clearly shorter); token's would not
        # be taken (84 is not beyond 78 + 7.6, and no shorter).
        ({"token": (28, [27, 22, 26]), "feature": (27, [19, 12, 23])}, 81),
    ],
)
def test_auto_takes_the_chunk_alignment_where_it_generalizes_better_or_as_well_and_shorter(
    monkeypatch, chunk_scores, held_out
):
    from fstsynth.synthesis import auto

    word_scores = {"token": (26, [27, 22, 26]), "feature": (25, [27, 22, 26])}
    monkeypatch.setattr(auto, "AUTO_ORDER", ("token", "feature"))
    monkeypatch.setattr(
        auto, "cv_splits", lambda pairs, k, rows: [(list(pairs), [split] * 100) for split in range(3)]
    )

    def fold(train, test, features, options, deadline):
        held, rules = (chunk_scores if options.chunks == "on" else word_scores)[options.variant]
        return auto.SplitScore(hits(held, len(test)), {}, rules[test[0]])

    monkeypatch.setattr(auto, "split_hits", fold)
    result = learn(PAIRS, FEATURES, Options(variant="auto", tiers=False))
    assert result.held_out == held_out / 300


def test_auto_takes_no_chunk_alignment_on_a_tie_where_no_held_out_row_is_right(monkeypatch):
    from fstsynth.synthesis import auto

    monkeypatch.setattr(auto, "AUTO_ORDER", ("token", "feature"))
    monkeypatch.setattr(
        auto, "cv_splits", lambda pairs, k, rows: [(list(pairs), [split] * 100) for split in range(3)]
    )
    chunked = []

    def fold(train, test, features, options, deadline):
        if options.chunks == "on":
            chunked.append(options.variant)
            return auto.SplitScore(hits(0, len(test)), {}, [19, 12, 23][test[0]])
        return auto.SplitScore(hits(0, len(test)), {}, [27, 22, 26][test[0]])

    monkeypatch.setattr(auto, "split_hits", fold)
    from fstsynth.synthesis import variant

    tried = []
    real = variant.learn_variant
    monkeypatch.setattr(variant, "learn_variant", lambda *args: tried.append(args[2].chunks) or real(*args))
    result = learn(PAIRS, FEATURES, Options(variant="auto", tiers=False))
    assert chunked and result.held_out == 0 and tried == ["cv"]


# Selection's bookkeeping (`fstsynth.synthesis.selection._select`): the candidates kept
# aside with their exceptions are rescored only when an example they depend on is
# decided. Checked against the same lazy greedy rescoring every one of them each time
# it comes off the heap (as selection did before), on random passes where broad rules
# need exceptions, with noise.


def _select_rescoring_aside(found, need, n, exceptions, slots, undecided_at, deadline):
    """`_select` rescoring each candidate kept aside whenever it is popped: the same
    lazy heap, witnesses and first searches, nothing kept between rounds."""
    import heapq

    from fstsynth.synthesis.bitsets import bit_indices, bits, lowest_bit

    undecided = (1 << n) - 1
    rules = []
    m = len(found)
    order = sorted(range(m), key=lambda k: (found[k].cost, found[k].text))
    heap = [-found[k].gainable.bit_count() * m + rank for rank, k in enumerate(order) if found[k].gainable]
    heapq.heapify(heap)
    waiting: dict[int, list[int]] = {}

    def gain_of(k):
        return (found[k].gainable & undecided_at[found[k].positives.number]).bit_count()

    def wrong_of(k):
        return found[k].fires & found[k].wrong_where & undecided

    while undecided & need:
        best, best_key, excepted, aside = None, 0, [], []
        while heap:
            key = heap[0]
            if best is not None and key > best_key:
                break
            past, rank = divmod(key, m)
            k = order[rank]
            gain = gain_of(k)
            if gain == 0:
                heapq.heappop(heap)
                continue
            if gain != -past:
                heapq.heapreplace(heap, -gain * m + rank)
                continue
            heapq.heappop(heap)
            wrong = wrong_of(k)
            if wrong:
                tolerated = exceptions.tolerates(gain, wrong)
                if best is not None and tolerated and -(gain // 2) * m + rank > best_key:
                    aside.append(key)
                    continue
                danger = undecided_at[exceptions.needed.number]
                excepting = exceptions.cover(k, wrong, danger, gain, undecided, tolerated) if gain > 1 else None
                if excepting is None or gain <= len(excepting):
                    waiting.setdefault(lowest_bit(wrong & need or wrong), []).append(key)
                    continue
                aside.append(key)
                shared = -(gain // (len(excepting) + 1)) * m + rank
                if best is None or shared < best_key:
                    best, best_key, excepted = found[k], shared, excepting
                continue
            best, excepted = found[k], []
            break
        for key in aside:
            heapq.heappush(heap, key)
        if best is None:
            break
        fires = best.fires
        for rule in excepted:
            rules.append(rule)
            fires |= rule.fires
        rules.append(best)
        decided = undecided & fires
        undecided &= ~fires
        cleared: dict[int, list[int]] = {}
        for index in bit_indices(decided):
            for number, bit in slots.get(index, ()):
                cleared.setdefault(number, []).append(bit)
            for key in waiting.pop(index, ()):
                k = order[key % m]
                wrong = wrong_of(k)
                if wrong and not exceptions.tolerates(gain_of(k), wrong):
                    waiting.setdefault(lowest_bit(wrong & need or wrong), []).append(key)
                    continue
                heapq.heappush(heap, key)
        for number, cleared_bits in cleared.items():
            undecided_at[number] &= ~bits(cleared_bits)
    return rules


def _random_pairs(rng):
    """Words over a few letters, rewritten by rules on different letters, one of them
    broad with exceptions (a -> e before b, not after c, or not after c, d or g), and
    some noise: the broad rule, of the most changes, waits aside while others are taken."""
    blocked = rng.choice([("c",), ("c", "d", "g")])
    pairs = []
    for _ in range(rng.randint(30, 90)):
        word = [rng.choice("abcdgko") for _ in range(rng.randint(3, 9))]
        target = list(word)
        for i, tok in enumerate(word):
            after = word[i + 1] if i + 1 < len(word) else None
            before = word[i - 1] if i else None
            if tok == "a" and after == "b" and before not in blocked:
                target[i] = "e"
            elif tok == "d" and after is None:
                target[i] = "t"
            elif tok == "o" and after == "a":
                target[i] = "u"
            elif tok == "k" and before is None:
                target[i] = "q"
            elif tok == "g" and after == "o":
                target[i] = "j"
        if rng.random() < 0.05:
            i = rng.randrange(len(word))
            target[i] = rng.choice("abcdoetu")
        pairs.append((tuple(word), tuple(target)))
    return pairs


def _selections(pairs, options):
    """The rules `_select` and `_select_rescoring_aside` take on one pass over `pairs`,
    each with exceptions of its own, and how often each asked `Exceptions.cover`."""
    from fstsynth.synthesis import tagged_examples
    from fstsynth.synthesis.atoms import atom_index
    from fstsynth.synthesis.bitsets import bit_indices
    from fstsynth.synthesis.candidates import Positives, candidates
    from fstsynth.synthesis.exceptions import Exceptions, slots_of
    from fstsynth.synthesis.options import Deadline
    from fstsynth.synthesis.selection import _select

    examples = [ex for src, tgt in pairs for ex in tagged_examples(tuple((t, None) for t in src), tgt, {}, "global")]
    deadline = Deadline.after(None)
    index = atom_index(examples, {}, options, deadline)
    found, need = candidates(examples, {}, options, deadline, index)
    results = []
    for select in (_select, _select_rescoring_aside):
        needed = Positives(-2, bit_indices(need))
        groups = {id(cand.positives): cand.positives for cand in found}
        groups[id(needed)] = needed
        slots = slots_of(groups.values())
        exceptions = Exceptions(index, need, needed, len(examples), options, found, slots)
        asked = []
        cover = exceptions.cover
        exceptions.cover = lambda *args, cover=cover, asked=asked: asked.append(args) or cover(*args)  # type: ignore[method-assign]
        undecided_at = {group.number: (1 << len(group.indices)) - 1 for group in groups.values()}
        chosen = select(found, need, len(examples), exceptions, slots, undecided_at, deadline)
        results.append(([cand.text for cand in chosen], len(asked)))
    return results


def test_selection_keeps_aside_candidates_as_rescoring_them_each_round_would_choose():
    rng = random.Random(7)
    asked_kept = asked_rescoring = excepted = 0
    for _ in range(40):
        pairs = _random_pairs(rng)
        options = Options(variant="token", exceptions=rng.choice([1, 2, 3]), max_conjuncts=rng.choice([2, 3]))
        (kept, asked), (rescored, asked_each_time) = _selections(pairs, options)
        assert kept == rescored
        assert asked <= asked_each_time
        asked_kept += asked
        asked_rescoring += asked_each_time
        excepted += any("Identity(" in text for text in kept)
    # The inputs exercise the exceptions, and the candidates kept aside are not all
    # rescored each round (without `_select`'s bookkeeping, as many asks as rescoring).
    assert excepted >= 3
    assert asked_kept < asked_rescoring

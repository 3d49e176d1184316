"""How the rules of a pass of an exported Pynini grammar become its transducer.

`PassBuilder` turns a pass's rules (`exporters/pynini_rules.py`) into one transducer
over integer labels (`Symbols`); `exporters/pynini_cascade.py` composes the passes,
applies them to words and writes them to a FAR.

This file is copied, after the line that marks its start, into every exported grammar
(`exporters.pynini_grammar`), which thus needs nothing but Pynini and the standard
library. The tests also import it directly.
"""

# ---- imports ----
# (No `from __future__ import annotations`: dataclasses would then look this module up
# in sys.modules, where a grammar loaded by hand may not be.)
from typing import Callable, Iterable, Mapping, Sequence, Union

import pynini

# ---- the rules (a grammar has them above, copied from exporters/pynini_rules.py) ----
from exporters.pynini_rules import (
    Agree,
    Boundary,
    COPIES,
    CopyReplace,
    Delete,
    END,
    FeatureIs,
    Identity,
    Insert,
    Negated,
    OnTier,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    SetFeatures,
    Test,
    TokenIs,
    Transformation,
)

# ---- runtime (everything below is copied into exported grammars) ----

# A grammar lists, per column pair, passes of rules in the DSL's terms:
# `p.rule(Insert(["d"]), at={0: [feature("voice")], 1: [END]})` is "insert d after a
# voiced token at the end of the word". Each rule becomes one `pynini.cdrewrite`, a pass
# the first-match-wins combination of its rules, and the passes are composed in order
# (docs/design.md, section 5):
#
# 1. `prepare`: the word `a b` becomes `<s> <?> a <?> b <?>`: a start cell `<s>` (the
#    position before the first token, where prefixes are inserted) and, after every cell,
#    a *slot* `<?>` that no rule has taken yet;
# 2. for each rule in order, one cdrewrite rewrites a slot that is still `<?>` into the
#    rule's *marker* where the rule applies: contexts accept any slot symbol, so every
#    rule reads the pass input whatever earlier rules marked, and a slot an earlier rule
#    took is not `<?>` any more, so the first rule that applies wins. The contexts
#    (both read on the input: `direction="sim"`) are the rule's tests at each offset
#    (a union of cells, or the word boundary: `[BOS]`/`[EOS]`), and its tier tests, as
#    languages in which only the tier's tokens count;
# 3. a rule that copies the token at an offset other than 0 turns its marker into one
#    naming the token found there (one cdrewrite per token); a rule that agrees in
#    features with another token marks by the values found there (one cdrewrite per
#    values), and a feature change writes by its token table;
# 4. `realize`: a context-free map writes each cell by its slot: `<?>` keeps the token,
#    a marker writes the rule's output. Every token written carries the transformation
#    that made it (as the cell `a<t2>`) where the next pass tests it
#    (`made_by(...)`), else it is the plain token.
#
# A token the grammar has never seen is read as `<unk>` by `rewrite` (it has no
# features and matches no `token(...)` test); where the rules keep or copy it, `rewrite`
# puts the original token back, as `fstsynth apply` does. Given to the transducers
# directly, a token outside the symbol table has no arc.
#

UNK = "<unk>"
#: The labels cdrewrite reads as the beginning and the end of the string.
BOS_LABEL, EOS_LABEL = 0xF8FE, 0xF8FF


# -- building transducers from labels (no string parsing: tokens may be any text)


def label_acceptor(labels: Iterable[int]) -> pynini.Fst:
    """One symbol among `labels` (the empty language if there is none)."""
    fst = pynini.Fst()
    start = fst.add_state()
    fst.set_start(start)
    labels = sorted(set(labels))
    if labels:
        end = fst.add_state()
        fst.set_final(end)
        for label in labels:
            fst.add_arc(start, pynini.Arc(label, label, 0, end))
    return fst


def _epsilon() -> pynini.Fst:
    fst = pynini.Fst()
    fst.set_start(fst.add_state())
    fst.set_final(0)
    return fst


def label_string(labels: Sequence[int]) -> pynini.Fst:
    fst = pynini.Fst()
    state = fst.add_state()
    fst.set_start(state)
    for label in labels:
        nxt = fst.add_state()
        fst.add_arc(state, pynini.Arc(label, label, 0, nxt))
        state = nxt
    fst.set_final(state)
    return fst


def _cross(source: int, target: int) -> pynini.Fst:
    fst = pynini.Fst()
    start, end = fst.add_state(), fst.add_state()
    fst.set_start(start)
    fst.set_final(end)
    fst.add_arc(start, pynini.Arc(source, target, 0, end))
    return fst


def _concat(parts: Sequence[pynini.Fst]) -> pynini.Fst:
    out = _epsilon()
    for part in parts:
        out = pynini.concat(out, part)
    return out.rmepsilon()


def _union(parts: Sequence[pynini.Fst]) -> pynini.Fst:
    if not parts:
        return label_acceptor(())
    return pynini.union(*parts).rmepsilon()


def _intersect(parts: Sequence[pynini.Fst]) -> pynini.Fst:
    out = parts[0].copy().optimize()
    for part in parts[1:]:
        out = pynini.intersect(out.arcsort("olabel"), part.copy().optimize().arcsort("ilabel")).optimize()
    return out


# -- symbols


class Symbols:
    """Labels: `<eps>` 0, the tokens 1..N in the order given (as the model's
    symbols.txt), then the grammar's own symbols (cells with tags, markers)."""

    def __init__(self, tokens: Sequence[str]) -> None:
        self.table = pynini.SymbolTable()
        self.table.add_symbol("<eps>", 0)
        for tok in tokens:
            self.table.add_symbol(tok)
        self.tokens = list(tokens)
        self._own: dict[object, int] = {}

    def token(self, name: str) -> int:
        return self.table.find(name)

    def own(self, key: object, name: str) -> int:
        """The label of one of the grammar's symbols (`name` made unique)."""
        label = self._own.get(key)
        if label is None:
            while self.table.find(name) != -1:
                name += "'"
            label = self.table.add_symbol(name)
            self._own[key] = label
        return label

    def token_table(self) -> pynini.SymbolTable:
        """`<eps>` and the tokens: what words are written in."""
        table = pynini.SymbolTable()
        table.add_symbol("<eps>", 0)
        for tok in self.tokens:
            table.add_symbol(tok, self.table.find(tok))
        return table


Cell = tuple[str, Union[Transformation, None]]  # a token and the tag it carries (None: untagged)
CellTest = Callable[[Union[Cell, None]], bool]  # a test of a cell (None: the boundary)
Variant = tuple[CellTest, list[OnTier]]  # one alternative of a rule (see `variants`)


class PassBuilder:
    """The transducers of one pass (see the module docstring)."""

    def __init__(
        self,
        symbols: Symbols,
        number: int,
        rules: Sequence[Rule],
        classes: Mapping[str, Iterable[str]],
        tags_in: Sequence[Transformation],
        tags_out: Sequence[Transformation],
        tag_names: dict[Transformation, str],
    ) -> None:
        self.sy = symbols
        self.number = number
        self.rules = list(rules)
        self.classes = {name: set(members) for name, members in classes.items()}
        self.tags_out = set(tags_out)
        self.tag_names = tag_names
        self.cells: list[Cell] = [(tok, None) for tok in symbols.tokens]
        self.cells += [(tok, tag) for tag in tags_in for tok in symbols.tokens]
        self.start = symbols.own(("start", number), "<s>")
        self.free = symbols.own(("free", number), "<?>")
        self.markers: dict[object, int] = {}
        for r, rule in enumerate(self.rules, start=1):
            self.markers[r] = symbols.own(("mark", number, r), f"<p{number}r{r}>")
            if isinstance(rule.writes, COPIES) and rule.writes.offset != 0:
                for tok in symbols.tokens:
                    self.markers[(r, tok)] = symbols.own(("mark", number, r, tok), f"<p{number}r{r}:{tok}>")
            if isinstance(rule.writes, Agree):  # a marker per values agreed with
                for values, _ in rule.writes.table:
                    name = "".join("+" if v else "-" for v in values)
                    self.markers[(r, values)] = symbols.own(("mark", number, r, values), f"<p{number}r{r}:{name}>")
        self.slot_labels = [self.free, *self.markers.values()]
        self.slot = label_acceptor(self.slot_labels)
        self.sigma_star = label_acceptor([*map(self.label, self.cells), self.start, *self.slot_labels]).closure()

    # -- cells and tests

    def label(self, cell: Cell) -> int:
        tok, tag = cell
        if tag is None:
            return self.sy.token(tok)
        return self.sy.own(("cell", tok, tag), f"{tok}<{self.tag_names[tag]}>")

    def out_label(self, tok: str, tag: Transformation) -> int:
        """A token as the next pass reads it: with its tag if that pass tests it."""
        return self.label((tok, tag if tag in self.tags_out else None))

    def has(self, tok: str, name: str) -> bool:
        return tok in self.classes.get(name, ())

    def holds(self, test: Test, cell: Cell | None) -> bool:
        """Whether `test` holds of `cell` (None: the boundary)."""
        if isinstance(test, Negated):
            return not self.holds(test.test, cell)
        if isinstance(test, Boundary):
            return cell is None
        if cell is None:
            return False
        if isinstance(test, TokenIs):
            return cell[0] == test.token
        if isinstance(test, FeatureIs):
            return self.has(cell[0], test.feature)
        return cell[1] == test.transformation

    def slots(
        self, rule: Rule, here: CellTest, values: tuple[bool, ...] | None = None
    ) -> dict[int, tuple[list[Cell], bool]]:
        """Per offset the rule tests (and the offset it copies): the cells that pass,
        and whether the boundary does; `here`: a further test of the position's cell;
        `values`: for an `Agree`, the values agreed with."""
        tests = dict(rule.at)
        tr = rule.writes
        extra: dict[int, CellTest] = {0: here}
        if isinstance(tr, ReplaceBy):
            source = tr.source
            extra[0] = _both(here, lambda cell: cell is not None and cell[0] == source)
        if isinstance(tr, COPIES):  # the copied token must exist
            extra[tr.offset] = _both(extra.get(tr.offset, _always), _is_token)
        if isinstance(tr, SetFeatures):
            mapped = dict(tr.table)
            extra[0] = _both(here, lambda cell: cell is not None and cell[0] in mapped)
        if isinstance(tr, Agree) and values is not None:
            made = dict(dict(tr.table)[values])
            extra[0] = _both(here, lambda cell: cell is not None and cell[0] in made)
            if tr.tier is None:  # the token at the offset has those values
                sources = dict(tr.sources)
                extra[tr.offset] = _both(
                    extra.get(tr.offset, _always), lambda cell: cell is not None and sources.get(cell[0]) == values
                )
        out = {}
        for k in set(tests) | set(extra):
            at_k, also = tests.get(k, ()), extra.get(k, _always)
            passed = [c for c in self.cells if self._passes(at_k, also, c)]
            out[k] = (passed, self._passes(at_k, also, None))
        return out

    def _passes(self, tests: Sequence[Test], also: CellTest, cell: Cell | None) -> bool:
        return all(self.holds(t, cell) for t in tests) and also(cell)

    def cell_set(self, cells: Sequence[Cell], boundary: bool, start: bool) -> pynini.Fst:
        """The cells as an acceptor; with `start`, the start cell too where the boundary
        passes (the start position reads as the boundary)."""
        labels = [self.label(c) for c in cells]
        if start and boundary:
            labels.append(self.start)
        return label_acceptor(labels)

    # -- contexts

    def left_context(self, slots: Mapping[int, tuple[list[Cell], bool]]) -> list[tuple[bool, pynini.Fst]]:
        """Alternatives (anchored at [BOS], language) for what lies left of the slot:
        the cells at offsets lo..-1, each with its slot, then the position's own cell."""
        every = (self.cells, True)
        lo = min([k for k in slots if k < 0], default=0)
        here = self.cell_set(*slots.get(0, every), start=True)
        if not lo:
            return [(False, here)]  # the start cell is in `here` where it may be
        units = [pynini.concat(self.cell_set(*slots.get(k, every), start=True), self.slot) for k in range(lo, 0)]
        alternatives = [(False, _concat([*units, here]))]
        # The j nearest offsets inside the word (the start cell counting as one), the
        # farther ones beyond its start; j = 0: the position is the start cell.
        for j in range(0, -lo):
            if all(slots.get(k, every)[1] for k in range(lo, -j)):
                alternatives.append((True, _concat([label_acceptor([BOS_LABEL]), *units[len(units) - j :], here])))
        return alternatives

    def right_context(self, slots: Mapping[int, tuple[list[Cell], bool]]) -> list[tuple[bool, pynini.Fst]]:
        """Alternatives (anchored at [EOS], language) for what lies right of the slot."""
        every = (self.cells, True)
        hi = max([k for k in slots if k > 0], default=0)
        if not hi:
            return [(False, _epsilon())]
        cells = [self.cell_set(*slots.get(k, every), start=False) for k in range(1, hi + 1)]
        full = [part for k, cell in enumerate(cells) for part in ((cell, self.slot) if k < hi - 1 else (cell,))]
        alternatives = [(False, _concat(full))]
        for m in range(0, hi):
            if all(slots.get(k, every)[1] for k in range(m + 1, hi + 1)):
                near = [part for cell in cells[:m] for part in (cell, self.slot)]
                alternatives.append((True, _concat([*near, label_acceptor([EOS_LABEL])])))
        return alternatives

    def tier_context(
        self, test: OnTier, tokens: Iterable[str] | None = None
    ) -> tuple[int, list[tuple[bool, pynini.Fst]]]:
        """A tier test as (side, alternatives): on the left, languages ending with the
        position's cell; on the right, languages starting after its slot. Cells off
        the tier (the start cell among them) are skipped. `tokens`: instead of the
        test's feature, the tier token must be one of these (an `Agree` on a tier)."""
        on_cells = [c for c in self.cells if self.has(c[0], test.tier)]
        off_labels = [self.label(c) for c in self.cells if not self.has(c[0], test.tier)] + [self.start]
        on = pynini.concat(label_acceptor(map(self.label, on_cells)), self.slot)
        off = pynini.concat(label_acceptor(off_labels), self.slot).closure()
        unit = pynini.concat(on, off)  # a tier token, then the tokens off the tier after it
        between = abs(test.index) - 1
        if tokens is not None:
            chosen = set(tokens)
            wanted, fewer = [c for c in on_cells if c[0] in chosen], False
        elif isinstance(test.feature, Boundary):
            wanted = on_cells if test.negated else []
            fewer = not test.negated  # whether "fewer than k tier tokens" passes
        else:
            name = test.feature
            wanted = [c for c in on_cells if self.has(c[0], name) != test.negated]
            fewer = test.negated
        target = pynini.concat(label_acceptor(map(self.label, wanted)), self.slot)
        anything = label_acceptor([*map(self.label, self.cells), self.start])
        alternatives: list[tuple[bool, pynini.Fst]] = []
        repeated = _concat([unit] * between)
        at_most = _union([_concat([unit] * n) for n in range(between + 1)])
        if test.index < 0:
            # ... target (off)* (unit){between} <here>   |   [BOS] (off)* (unit){0..between} <here>
            if wanted:
                alternatives.append((False, _concat([target, off, repeated, anything])))
            if fewer:
                alternatives.append((True, _concat([label_acceptor([BOS_LABEL]), off, at_most, anything])))
            return -1, alternatives
        # (off)* (unit){between} target ...   |   (off)* (unit){0..between} [EOS]
        if wanted:
            alternatives.append((False, _concat([off, repeated, label_acceptor(map(self.label, wanted))])))
        if fewer:
            alternatives.append((True, _concat([off, at_most, label_acceptor([EOS_LABEL])])))
        return 1, alternatives

    def _extended(self, alternatives: list[tuple[bool, pynini.Fst]], left: bool) -> pynini.Fst:
        """The alternatives as one language, each unanchored one extended away from the
        position to the word's edge (so that languages can be intersected)."""
        sigma = label_acceptor([*map(self.label, self.cells), self.start, *self.slot_labels]).closure()
        edge = label_acceptor([BOS_LABEL if left else EOS_LABEL]).ques
        parts = []
        for anchored, fst in alternatives:
            if anchored:
                parts.append(fst)
            elif left:
                parts.append(_concat([edge, sigma, fst]))
            else:
                parts.append(_concat([fst, sigma, edge]))
        return _union(parts)

    def variants(self, rule: Rule) -> list[Variant]:
        """The rule as alternatives (a test of the position's cell, tier tests none of
        which is inclusive), which together hold exactly where it does: an inclusive
        test is one on the next tier token if the position's token is on the tier (the
        token itself, for the nearest), and the plain test if it is not."""
        variants: list[Variant] = [(_always, [])]
        for test in rule.tiers:
            if not test.inclusive:
                variants = [(here, [*tiers, test]) for here, tiers in variants]
                continue
            off, on = self._inclusive_split(test)
            split = [(_both(here, off[0]), [*tiers, *off[1]]) for here, tiers in variants]
            if on is not None:
                split += [(_both(here, on[0]), [*tiers, *on[1]]) for here, tiers in variants]
            variants = split
        return variants

    def _inclusive_split(self, test: OnTier) -> tuple[Variant, Variant | None]:
        """An inclusive tier test as (where the position's cell is off the tier: the
        plain test; where it is on it: the test of the next tier token, of the cell
        itself for the nearest, or None if it can never hold there)."""
        def off_tier(cell: Cell | None) -> bool:
            return cell is None or not self.has(cell[0], test.tier)

        def on_tier(cell: Cell | None) -> bool:
            return cell is not None and self.has(cell[0], test.tier)

        plain = (off_tier, [OnTier(test.tier, test.feature, test.index, False, test.negated)])
        if abs(test.index) > 1:
            step = 1 if test.index > 0 else -1
            return plain, (on_tier, [OnTier(test.tier, test.feature, test.index - step, False, test.negated)])
        feature = test.feature
        if isinstance(feature, Boundary):  # "no tier token, counting this one": false here
            return plain, ((on_tier, []) if test.negated else None)

        def itself(cell: Cell | None) -> bool:
            return cell is not None and self.has(cell[0], test.tier) and self.has(cell[0], feature) != test.negated

        return plain, (itself, [])

    def contexts(
        self,
        slots: Mapping[int, tuple[list[Cell], bool]],
        tier_tests: Sequence[OnTier],
        agreed: tuple[OnTier, list[str]] | None = None,
    ) -> tuple[pynini.Fst, pynini.Fst]:
        """The left and right contexts; `agreed`: the tier token an `Agree` reads, and
        the tokens it may be."""
        left = self.left_context(slots)
        right = self.right_context(slots)
        tiers = [self.tier_context(t) for t in tier_tests]
        if agreed is not None:
            tiers.append(self.tier_context(*agreed))
        if not tiers:
            return _union([f for _, f in left]).optimize(), _union([f for _, f in right]).optimize()
        lefts = [self._extended(left, True)] + [self._extended(alts, True) for side, alts in tiers if side < 0]
        rights = [self._extended(right, False)] + [self._extended(alts, False) for side, alts in tiers if side > 0]
        return _intersect(lefts), _intersect(rights)

    # -- the pass

    def prepare(self) -> pynini.Fst:
        """Cells -> `<s> <?>` then each cell followed by `<?>`."""
        fst = pynini.Fst()
        s0, s1, loop = fst.add_state(), fst.add_state(), fst.add_state()
        fst.set_start(s0)
        fst.set_final(loop)
        fst.add_arc(s0, pynini.Arc(0, self.start, 0, s1))
        fst.add_arc(s1, pynini.Arc(0, self.free, 0, loop))
        for cell in self.cells:
            mid = fst.add_state()
            fst.add_arc(loop, pynini.Arc(self.label(cell), self.label(cell), 0, mid))
            fst.add_arc(mid, pynini.Arc(0, self.free, 0, loop))
        return fst

    def marking(self) -> list[pynini.Fst]:
        """One cdrewrite per rule (and per token a copy can read)."""
        steps = []
        for r, rule in enumerate(self.rules, start=1):
            # One cdrewrite per alternative (most rules have one): all mark with the
            # rule's marker, so together they mark where any of them holds.
            # An `Agree` marks by the values agreed with: one marker for each.
            tr = rule.writes
            groups: list[tuple[bool, ...] | None] = [v for v, _ in tr.table] if isinstance(tr, Agree) else [None]
            for values in groups:
                marker = self.markers[r if values is None else (r, values)]
                agreed = None
                if isinstance(tr, Agree) and tr.tier is not None:
                    having = [tok for tok, v in tr.sources if v == values]
                    agreed = (OnTier(tr.tier, END, tr.offset), having)
                for here, tiers in self.variants(rule):
                    left, right = self.contexts(self.slots(rule, here, values), tiers, agreed)
                    if left.num_states() == 0 or right.num_states() == 0:
                        continue  # its tests can never all hold
                    steps.append(pynini.cdrewrite(_cross(self.free, marker), left, right, self.sigma_star))
            if isinstance(tr, COPIES) and tr.offset != 0:
                steps += self._copy_steps(r, tr.offset)
        return steps

    def _copy_steps(self, r: int, offset: int) -> list[pynini.Fst]:
        """The marker of rule r becomes, per token, one naming the token at `offset`."""
        any_cell = label_acceptor([*map(self.label, self.cells), self.start])
        unit = pynini.concat(any_cell, self.slot)
        steps = []
        for tok in self.sy.tokens:
            found = label_acceptor([self.label(c) for c in self.cells if c[0] == tok])
            if offset > 0:
                left, right = any_cell, _concat([*([unit] * (offset - 1)), found])
            else:
                left, right = _concat([found, self.slot, *([unit] * (-offset - 1)), any_cell]), _epsilon()
            tau = _cross(self.markers[r], self.markers[(r, tok)])
            steps.append(pynini.cdrewrite(tau, left.optimize(), right.optimize(), self.sigma_star))
        return steps

    def realize(self) -> pynini.Fst:
        """Each cell and its slot -> what the pass writes there."""
        fst = pynini.Fst()
        loop = fst.add_state()
        fst.set_start(loop)
        fst.set_final(loop)
        cells: list[Cell | None] = [None, *self.cells]  # None: the start cell
        for cell in cells:
            mid = fst.add_state()
            fst.add_arc(loop, pynini.Arc(self.start if cell is None else self.label(cell), 0, 0, mid))
            for slot, labels in self._outputs(cell):
                state = mid
                for k, label in enumerate(labels or [0]):
                    nxt = loop if k == max(len(labels), 1) - 1 else fst.add_state()
                    fst.add_arc(state, pynini.Arc(slot if k == 0 else 0, label, 0, nxt))
                    state = nxt
        return fst

    def _outputs(self, cell: Cell | None) -> list[tuple[int, list[int]]]:
        """(slot label, labels written) for each slot a cell may carry."""
        tok = None if cell is None else cell[0]
        kept = [] if tok is None else [tok]
        out = [(self.free, [self.out_label(t, Identity()) for t in kept])]
        for r, rule in enumerate(self.rules, start=1):
            tr = rule.writes
            written: dict[object, list[str]] = {}
            if isinstance(tr, Insert):
                written[r] = [*kept, *tr.tokens]
            elif isinstance(tr, (ReplaceBy, ReplaceAnyBy)):
                written[r] = list(tr.target) if tok is not None else []
            elif isinstance(tr, Identity):
                written[r] = kept
            elif isinstance(tr, Delete):
                written[r] = []
            elif isinstance(tr, SetFeatures):
                if tok is not None and tok in dict(tr.table):
                    written[r] = [dict(tr.table)[tok]]
            elif isinstance(tr, Agree):
                for values, made in tr.table:
                    if tok is not None and tok in dict(made):
                        written[(r, values)] = [dict(made)[tok]]
            elif tr.offset == 0:
                if tok is not None:
                    written[r] = [tok] if isinstance(tr, CopyReplace) else [tok, tok]
            else:
                for copied in self.sy.tokens:
                    if isinstance(tr, CopyReplace):
                        written[(r, copied)] = [copied] if tok is not None else []
                    else:
                        written[(r, copied)] = [*kept, copied]
            out += [(self.markers[key], [self.out_label(t, tr) for t in toks]) for key, toks in written.items()]
        return out

    def transducer(self) -> pynini.Fst:
        """The pass: prepare, mark, resolve copies, realize; composed in that order."""
        fst = self.prepare()
        size = fst.num_states()
        for step in [*self.marking(), self.realize()]:
            fst = pynini.compose(fst, step.arcsort("ilabel"))
            if fst.num_states() > 2 * size:  # optimizing every step costs more than it saves
                fst = fst.optimize()
                size = fst.num_states()
        return fst.optimize()


def _always(cell: Cell | None) -> bool:
    return True


def _is_token(cell: Cell | None) -> bool:
    return cell is not None


def _both(first: CellTest, second: CellTest) -> CellTest:
    if first is _always:
        return second
    return lambda cell: first(cell) and second(cell)

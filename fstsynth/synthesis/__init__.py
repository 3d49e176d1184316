"""Synthesis: learn a program from word pairs (FlashMeta-style candidates, NDSyn selection).

Public API:
    Options, Error, LearnResult, VARIANTS, AUTO, Deadline
    learn(pairs, features, options, jobs, deadline) -> LearnResult
                                      (variant "auto": chosen by k-fold cross-validation)
    token_map_pass(examples) -> Pass  (first pass of a transcription)
    plain_letter_pass(examples, target_vocab) -> Pass
    synthesize_pass(examples, features, options, deadline) -> Pass
    rule_cost(rule, variant) -> float (the ranking score is its negation)
    TaggedExample, tagged_examples(word, target, features, mode, ...)

The modules, in the order a pass is learned (docs/design.md, section 4):

- `options`: `Options`, the learner's `Error`, the one `Deadline` of a column pair.
- `learner`: `learn`, with the variant asked for or by `auto`.
- `auto`: `auto`'s choice of a configuration by cross-validation over the variants.
- `variant`: one variant's passes (`learn_variant`): align, a first pass where one
  applies, then rule passes, each learned from the words the passes before it leave
  wrong; `fit`, on a sample of the rows past `Options.fit_rows`.
- `first_passes`: context-free first passes (a token map for a transcription, plain
  letters for letters with diacritics no target uses).
- `examples`: the token-level examples of a pass (`TaggedExample`) and the
  transformations consistent with each (inverse semantics).
- `atoms`: the atomic predicates true at each example, as a table and bitsets.
- `bitsets`: sets of examples as Python ints.
- `ranking`: the ranking score (cost) of predicates, transformations and rules.
- `candidates`: each transformation under the conjunctions of atoms worth trying;
  candidates that fire on the same examples are one (observational equivalence).
- `selection`: the decision list, greedily: the rule answering the most undecided
  examples needing a change and none wrongly, ties to the cheaper, then the printed
  form.
- `exceptions`: the few rules that let a broad rule be taken despite a few examples
  where it is wrong.
"""

from __future__ import annotations

from fstsynth.interpreter import apply_transformation
from fstsynth.synthesis.examples import TaggedExample, tagged_examples
from fstsynth.synthesis.first_passes import plain_letter_pass, token_map_pass
from fstsynth.synthesis.auto import AUTO_ORDER
from fstsynth.synthesis.learner import learn
from fstsynth.synthesis.options import AUTO, VARIANTS, Deadline, Error, Options
from fstsynth.synthesis.ranking import predicate_cost, rule_cost, transformation_cost
from fstsynth.synthesis.selection import synthesize_pass
from fstsynth.synthesis.variant import LearnResult, learn_variant

__all__ = [
    "Options",
    "Error",
    "Deadline",
    "LearnResult",
    "AUTO",
    "AUTO_ORDER",
    "VARIANTS",
    "learn",
    "learn_variant",
    "token_map_pass",
    "plain_letter_pass",
    "synthesize_pass",
    "rule_cost",
    "predicate_cost",
    "transformation_cost",
    "TaggedExample",
    "tagged_examples",
    "apply_transformation",
]

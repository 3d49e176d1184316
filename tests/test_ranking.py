"""ranking's costs of the tests a rule makes."""

from __future__ import annotations

import pytest

from fstsynth.dsl import Is, Not
from fstsynth.synthesis.ranking import DERIVED_IS_COST, predicate_cost


@pytest.mark.parametrize("variant", ["token", "feature"])
@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_a_test_of_a_derived_feature_costs_a_little_more_than_one_the_data_gives(variant: str, offset: int) -> None:
    """Where `ipa.hi` and `vowel` hold at the same examples (English flapping: every
    training flap follows a high vowel or a glide), the class the data names is taken;
    three such tests cost less than the next step of cost (a tenth)."""
    given = predicate_cost(Is("vowel", offset), variant)
    derived = predicate_cost(Is("ipa.hi", offset), variant)
    assert derived > given
    assert 3 * (derived - given) < 0.1
    assert predicate_cost(Not(Is("ipa.hi", offset)), variant) > predicate_cost(Not(Is("vowel", offset)), variant)
    assert derived - given == pytest.approx(DERIVED_IS_COST)

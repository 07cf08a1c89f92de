"""Catalogue worlds keep `USERS_KEPT` of a blueprint's users, so each holds more records (longer
generated tasks); a world whose thinned users all sit at a cap (a tool that never succeeds, a
rule never reached) is validated again with all its users rather than lost."""

from __future__ import annotations

from mcpsim.catalogue._blueprints import MIN_USERS, USERS_KEPT, blueprints, expand
from mcpsim.catalogue._run import CROWDED, build_world

# a variant of the arts council whose thinned applicants never meet its deadline rule (found by
# `mcpsim gen --catalog --count 12 --seed 3`)
BLUEPRINT, VARIANT, NAME = "arts_council", 18045500051054924167, "arts_council_00006"


def test_the_users_entity_keeps_a_share_of_its_rows_and_the_rest_keep_theirs() -> None:
    bp = blueprints()["clinic"]
    thin, full = expand(bp, 5, name="c"), expand(bp, 5, name="c", users_kept=1.0)
    user = thin.identity_entity()
    assert user is not None
    small, whole = thin.scales["small"], full.scales["small"]
    assert small[user] == max(MIN_USERS, round(whole[user] * USERS_KEPT)) < whole[user]
    assert {e: n for e, n in small.items() if e != user} == {e: n for e, n in whole.items() if e != user}
    assert thin.scales["default"][user] == 25 * small[user]


def test_a_world_crowded_at_a_cap_is_validated_again_with_all_its_users() -> None:
    spec = expand(blueprints()[BLUEPRINT], VARIANT, name=NAME)
    thinned = build_world(6, "not-a-blueprint", VARIANT, spec.model_dump(mode="json"), 4, False).result
    assert not thinned.accepted and set(thinned.rejected_by) <= CROWDED  # no blueprint to widen: as it was
    built = build_world(6, BLUEPRINT, VARIANT, spec.model_dump(mode="json"), 4, False)
    assert built.result.accepted, built.result.reasons
    assert NAME in built.spec_yaml
    user = spec.identity_entity()
    full = expand(blueprints()[BLUEPRINT], VARIANT, name=NAME, users_kept=1.0)
    assert f"{user}: {full.scales['small'][user]}" in built.spec_yaml  # the world written has them all

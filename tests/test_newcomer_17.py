"""What session 17's README-only walkthrough tripped on (a price that moved since last quarter, a stack's closeness
to a real runtime, a mixture of experts at batch 1, 8 and 64), each kept as a test."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import REPO, copy_root, invoke

H200 = "h200_sxm_141gb"
R1_ROW = "  r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml, card h200_sxm_141gb, price): "


def set_fact(root: Path, path: str, value: str, unit: str, provenance: str, source: str, locator: str) -> None:
    """``passprice fact set`` of the H200's ``path`` in ``root``."""
    out = invoke("fact", "set", H200, path, "--value", value, "--unit", unit, "--provenance", provenance,
                 "--source", source, "--locator", locator, root=root)
    assert out.exit_code == 0, out.output


def sides(tmp_path: Path) -> tuple[Path, Path]:
    """BASE: the checkout's registry with the H200's streams.append re-measured at 0.8 (so r1-qwen7b-h200's lock is
    out of date on BASE); HEAD: BASE's copy, to change further."""
    base = copy_root(tmp_path / "base")
    set_fact(base, "streams.append", "0.8", "1", "measured", "azure-ai-benchmarking-guide", "Triad, a re-run")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    return base, head


def test_a_commit_that_moves_no_tokens_says_what_it_moved_and_what_was_out_of_date_before(tmp_path: Path) -> None:
    # Confused me: in `passprice diff Q3 Q4`, Q4 only lowered the H200's `scale` (a term r1-qwen7b-h200 does not bind
    # on), and the lock's row read "price moved, lock not updated (memory_s)" beside "tokens/s 994.3 → 994.3 (+0 %)":
    # memory_s was moved by Q3's streams.append, not by Q4, which moved scale_s alone. The review's verdict (exit 1:
    # the lock records neither side's price) stays; the row now says which figure this change moved.
    base, head = sides(tmp_path)
    set_fact(head, "scale", "20", "Tcycle/s", "estimated", "nvidia-hopper-whitepaper", "Table 3 (a what-if)")
    out = invoke("diff", str(base), str(head), root=base)
    assert out.exit_code == 1, out.output
    lines = out.stdout.splitlines()
    row = lines.index(R1_ROW + "price moved, lock not updated (scale_s moved by this change, tokens/s did not; "
                      "memory_s out of date already on BASE)")
    # By hand: 4,370,560,992 B of weights at 4.8 TB/s × 0.9333 = 975.607 µs; 117,497,856 B a sequence at 4.8 TB/s ×
    # 0.8 = 30.5984 µs; 1 / 1,006.205 µs = 993.83 tokens/s on both sides.
    assert lines[row + 1 : row + 5] == [
        "    changed   scale",
        "    cites     scale: nvidia-hopper-whitepaper, Table 3 (a what-if)  (as HEAD cites them; whole under the file "
        "above)",  # walk50: the citation a re-cited fact now rests on
        "    floors    held → still holds",
        "    tokens/s  993.8 → 993.8  (+0 %)",
    ]


def test_a_commit_that_moves_a_lock_already_out_of_date_says_both(tmp_path: Path) -> None:
    # The same lock, its share re-measured again (0.8 → 0.79): the change moved memory_s, which BASE already did not
    # price as the lock records.
    base, head = sides(tmp_path)
    set_fact(head, "streams.append", "0.79", "1", "measured", "azure-ai-benchmarking-guide", "Triad, a re-run")
    out = invoke("diff", str(base), str(head), root=base)
    assert out.exit_code == 1, out.output
    assert R1_ROW + (
        "price moved, lock not updated (memory_s moved by this change, and out of date already on BASE)"
    ) in out.stdout.splitlines()
    # A lock up to date on BASE reads as before: the change alone moved it.
    fresh = copy_root(tmp_path / "fresh")
    out = invoke("diff", str(fresh), str(base), root=fresh)
    assert out.exit_code == 1, out.output
    assert R1_ROW + "price moved, lock not updated (memory_s)" in out.stdout.splitlines()


ROUTING = """#:schema ../../schema/routing.schema.json
[routing]
name = "My Mixtral, routing guessed"
experts = 8
used = 2

[hot_experts]
value = {hot}
unit = "1"
provenance = "estimated"
source = "uniform-routing-assumption"
locator = "a guess"

[hot_share]
value = {share}
unit = "1"
provenance = "estimated"
source = "uniform-routing-assumption"
locator = "a guess"
"""


def check_routing(tmp_path: Path, hot: float, share: float) -> tuple[int, str]:
    root = copy_root(tmp_path / f"r-{hot}-{share}")
    (root / "facts" / "routing" / "my-mixtral.toml").write_text(ROUTING.format(hot=hot, share=share))
    out = invoke("check", root=root)
    return out.exit_code, out.stderr


def test_check_refuses_a_routing_record_its_own_router_cannot_route_and_says_the_bound(tmp_path: Path) -> None:
    # Confused me: a record of 8 experts at 2 a token with a hot set of 1 expert (hot_experts 0.125) taking 90 % of
    # the slots passed `passprice check` ("0 problems"), then every price naming it was refused "BadRouting: … a set
    # of 1 of the 8 experts cannot take that share of 2 choices a token: each of its experts would be chosen with
    # probability 1.8 > 1", naming neither the share nor what it may be. By hand: p_hot = 2 × 0.9 / 1 = 1.8; the
    # most one expert can take is 1 choice of a token's 2, so hot_share ≤ 1 × 1 / 2 = 0.5.
    code, err = check_routing(tmp_path, 0.125, 0.9)
    assert code == 2
    assert err.splitlines() == [
        "passprice: error: facts/routing/my-mixtral.toml: hot_share: 0.9 of the routed token-slots cannot land so "
        "with a hot set of 1 of the 8 experts (hot_experts 0.125) at 2 a token: each of the hot set's experts would "
        "be chosen with probability 1.8, and an expert is chosen at most once a token; for that hot set hot_share "
        "must be at most 0.5: correct hot_share or hot_experts (every price naming the record is refused BadRouting "
        "until then)"
    ]
    # The other side: 7 hot experts taking 10 % leave 90 % of 2 choices to the one other expert (p = 1.8); a hot set
    # takes at least its experts' share (walk45: hot_share ≥ hot_experts, which also keeps the rest's p ≤ k / E), so
    # hot_share ≥ 0.875 (it read "at least 0.5", the p ≤ 1 bound alone, whose 0.5 walk45 refuses as a colder set).
    code, err = check_routing(tmp_path, 0.875, 0.1)
    assert code == 2
    assert err.splitlines() == [
        "passprice: error: facts/routing/my-mixtral.toml: hot_share: 0.1 of the routed token-slots cannot land so "
        "with a hot set of 7 of the 8 experts (hot_experts 0.875) at 2 a token: the one other expert would be chosen "
        "with probability 1.8, and an expert is chosen at most once a token; for that hot set hot_share must be at "
        "least 0.875 and at most 1: correct hot_share or hot_experts (every price naming the record is refused "
        "BadRouting until then)"
    ]
    # The README's own example (4 of 8 experts taking 70 %: p = 0.35 and 0.15) passes.
    code, err = check_routing(tmp_path, 0.5, 0.7)
    assert code == 0, err


def test_the_readme_defines_p_e_and_its_example_is_the_price() -> None:
    # Confused me: the README gave D(T) = Σ_e 1 − (1 − p_e)^T but never said what p_e is under a hot set, so the
    # measured routing's 44.06 experts at batch 8 could not be checked by hand. By hand: p_hot = 8 × 0.9 / 58 =
    # 0.12414, p_cold = 8 × 0.1 / 70 = 0.011429; 58 × (1 − 0.87586^8) + 70 × (1 − 0.98857^8) = 37.913 + 6.150 =
    # 44.063; uniform 128 × (1 − (15/16)^8) = 51.620.
    readme = " ".join(REPO.joinpath("README.md").read_text().split())
    assert ("p_e is the chance expert e is among a token's k, each set spread evenly: k · `hot_share` / (`hot_experts` "
            "· E) for each expert of the hot set") in readme
    assert "= 44.06 experts a layer, where uniform routing reads 51.62" in readme
    for routing, distinct in (("qwen3-30b-a3b-measured", 44.063), ("uniform", 51.620)):
        out = invoke("price", "qwen3-30b-a3b-h200", "--batch", "8", "--no-lock", "--routing", routing, "--json")
        assert out.exit_code == 0, out.output
        assert round(json.loads(out.stdout)["routing"]["distinct"], 3) == distinct


def test_the_readme_says_how_to_find_the_commit_that_moved_a_price_and_what_locks_disagree_means() -> None:
    # Confused me: `reproduce` listed four drifted facts and "first term that moved: memory_s", and nothing said how
    # to find which of them moved the price; `check` failed "locks disagree: …" after a lock added under a stack, a
    # line the README never showed; `fact show … --history` of a stack's share was refused.
    readme = " ".join(REPO.joinpath("README.md").read_text().split())
    assert "Which change moved a price since its lock is three commands." in readme
    assert "`passprice diff C~1 C` for each commit `C` since the lock" in readme
    # walkthrough 21: `fact show --history` reads a stack's and a routing record's facts (test_newcomer_21)
    assert "`passprice fact show llamacpp-cuda-2405 share.read --history`" in readme
    assert "and `check` fails `locks disagree: OLD and NEW both lock serving SERVING (price)" in readme

"""What walkthrough 49's review of a team's pull request (an MI300X datasheet's bandwidth with the stream shares
recomputed from it, a routing record re-cited to another row of its table) left, fixed: derived facts grouped with
the input they are derived from (tests/test_walk46.py prices the group), a routing record whose description still
names the row its facts no longer cite, a cut derivation text, and a stack's refusal that did not name the lock that
works."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from cli_helpers import REPO, copy_root, invoke
from passprice import locking, rowcite
from passprice.cards import load_card
from passprice.registry import Root
from passprice.reproduce import Drift, derived_groups
from passprice.review.records import stale_descriptions
from passprice.routing import load_routing
from passprice.textchange import cut_at_word, text_change


def test_a_derived_fact_is_grouped_with_the_changed_input_its_derivation_names() -> None:
    facts = load_card(Root(REPO), "mi300x").facts()
    pinned = facts["memory.capacity"]  # any fact: only today's derivation is read
    drift = [Drift(p, pinned, facts[p]) for p in ("streams.read", "memory.capacity", "memory.bandwidth",
                                                  "streams.append")]
    # streams.read's derivation names memory.bandwidth, drifted after it: the group is under the input, the derived
    # facts in drift order; memory.capacity, derived from nothing drifted, stays alone.
    assert derived_groups(drift) == ((("memory.bandwidth",), ("streams.read", "streams.append")),)
    assert derived_groups(drift[:3]) == ((("memory.bandwidth",), ("streams.read",)),)
    assert derived_groups([d for d in drift if d.path != "memory.bandwidth"]) == ()  # the input unchanged: no group


def test_a_derivation_cut_after_four_changes_ends_at_a_word() -> None:
    # Walkthrough 49: "…: experts for 90% coverage,  and 4 more changes", a double space and a dangling comma.
    old = ("hot / experts; hot = 58 (row 'narrow (single-domain Python)': experts for 90% coverage, 58 of 128); "
           "experts = 128 (row 'narrow (single-domain Python)': of 128 experts)")
    new = old.replace("58", "65").replace("narrow", "diverse").replace("single-domain Python", "prose, code, math")
    said = text_change(old, new)
    assert "  " not in said and ", …" not in said
    assert said.endswith("experts for 90% coverage … and 4 more changes"), said
    assert cut_at_word("table 'T', row 'diverse (prose, code, math)', ~1k tokens", 30) == "table 'T', row 'diverse…"
    assert cut_at_word("short", 30) == "short"


def test_a_stack_refusing_the_serving_s_batch_names_the_best_lock(tmp_path: Path) -> None:
    # Was: "price at batch 1 (--batch 1, …)", an option the lock of a registered serving cannot pair with its name;
    # `lock S --best --stack X` locks (the best batch sought inside the stack's range), so the refusal says it.
    out = tmp_path / "g.lock.toml"
    result = invoke("lock", "gpt-oss-20b-h200", "--stack", "llamacpp-cuda-2405", "-o", str(out), "--json")
    assert result.exit_code == 1 and not out.exists()
    refusal = json.loads(result.stdout)
    assert refusal["refusal"] == "BeyondStack" and refusal["best_instead"] is True
    assert refusal["message"].startswith("llamacpp-cuda-2405 was calibrated on batch 1 … 1; this price needs batch 32")
    assert refusal["message"].endswith(
        "; or lock its best price inside the stack's range: `passprice lock gpt-oss-20b-h200 --best --stack "
        f"llamacpp-cuda-2405 -o {out} --json`")  # the user's -o and --json kept (tests/test_fix188.py)
    # Checked, not assumed: the advice follows the best lock priced under the stack (locking.best_instead makes it,
    # unwritten). A serving whose positions lie outside the stack is refused at every batch: no such advice.
    far = invoke("lock", "gemma3-270m-h100", "--stack", "llamacpp-cuda-2405", "-o", str(out), "--json")
    assert far.exit_code == 1 and not out.exists()
    assert "calibrated on cached positions 0 … 8,192" in json.loads(far.stdout)["message"]
    assert "--best" not in json.loads(far.stdout)["message"] and "best_instead" not in json.loads(far.stdout)
    assert not locking.best_instead(Root(REPO), None, None, None)  # type: ignore[arg-type]  # no stack: no advice


ROUTING = "facts/routing/qwen3-30b-a3b-measured.toml"


def _recited(tmp_path: Path) -> Path:
    """A copy of the checkout's registry whose Qwen3-30B-A3B routing record is re-cited from the narrow row to the
    diverse one (58 → 65 of 128), its title, note and the source's read left as they were: walkthrough 49's change."""
    root = copy_root(tmp_path)
    record = root / ROUTING
    text = record.read_text(encoding="utf-8")
    assert text.count("row 'narrow (single-domain Python)'") == 3
    text = (text.replace("row 'narrow (single-domain Python)', ~8k tokens",
                         "row 'diverse (prose, code, math)', ~1k tokens")
            .replace("row 'narrow (single-domain Python)'", "row 'diverse (prose, code, math)'")
            .replace("58/128 (45%)", "65/128 (51%)").replace("value = 58,", "value = 65,")
            .replace("coverage, 58 of 128", "coverage, 65 of 128").replace("value = 0.453125\n", "value = 0.5078125\n"))
    record.write_text(text, encoding="utf-8")
    return root


def test_rows_and_words_of_a_description() -> None:
    old, new = ["narrow (single-domain Python)"], ["diverse (prose, code, math)"]
    title = "Qwen3-30B-A3B, measured skew (single-domain Python, ~8k tokens)"
    assert rowcite.old_row_words(title, old, new) == ("single-domain", "Python")
    # a text naming the new row's words too describes both: not flagged (the record's note names the other workload)
    assert rowcite.old_row_words("Its other workload (diverse prose, code and math) needed 65", old, new) == ()
    assert rowcite.uncited_rows("As cited: row 'narrow (single-domain Python)', ~8k", new) == tuple(old)
    assert rowcite.uncited_rows("As cited: row 'narrow (single-domain Python)'", old) == ()
    assert rowcite.uncited_rows("row 'narrow (single-domain Python)'", []) == ()  # facts citing no row: no claim


def test_a_record_re_cited_to_another_row_under_its_old_title_is_flagged(tmp_path: Path) -> None:
    head = _recited(tmp_path)
    # the review: the file's change, the title and the source's read unchanged
    before = load_routing(Root(REPO), "qwen3-30b-a3b-measured").hot_experts
    after = load_routing(Root(head), "qwen3-30b-a3b-measured").hot_experts
    change = SimpleNamespace(path="hot_experts", old=before, new=after)
    f = SimpleNamespace(path=ROUTING, kind="routing", status="changed", compared=True, holds_facts=True,
                        facts=(change,))
    sides = [SimpleNamespace(files={ROUTING: (r / ROUTING).read_bytes()}, root=Root(r)) for r in (REPO, head)]
    said = stale_descriptions(sides[0], sides[1], [f])  # type: ignore[arg-type]
    assert said == {ROUTING: (
        "its name still says 'single-domain', 'Python'; source gpu-container-handbook-routing-derisk's read still "
        "names row 'narrow (single-domain Python)', though its facts now cite row 'diverse (prose, code, math)' in "
        "place of row 'narrow (single-domain Python)': does each still describe the record? (nothing priced reads "
        "it; `audit` shows it)")}
    same = SimpleNamespace(**{**vars(f), "facts": (SimpleNamespace(path="hot_experts", old=before, new=before),)})
    assert stale_descriptions(sides[0], sides[0], [same]) == {}  # type: ignore[arg-type]  # no row re-cited
    # audit, which has no BASE: the read names a row none of the facts cites, the title words of that row alone
    lines = invoke("audit", "qwen3-30b-a3b-h200", root=head).output.splitlines()
    assert ("    to verify: read names row 'narrow (single-domain Python)', which none of the facts above cites (they "
            "cite row 'diverse (prose, code, math)'): does it still say how the source was read?") in lines
    assert ("  to verify: its title still says 'single-domain', 'Python' (of row 'narrow (single-domain Python)'), "
            "while its facts cite row 'diverse (prose, code, math)': does it still describe the record?") in lines
    assert not [x for x in invoke("audit", "qwen3-30b-a3b-h200").output.splitlines() if "to verify: " in x]

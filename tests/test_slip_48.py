"""Slip 48 (issue 13: can a change slip past a lock or a review?), each reproduced first in a scratch copy of this
checkout's registry with a lock of each kind (a mixture of experts with its routing record, ``qwen3-30b-a3b-h200``; a
speculative one, ``qwen35-27b-h200-mtp``; one made under the stack ``llamacpp-cuda-2405``, ``r1-stack``), every key of
each record kind edited one at a time and run through ``check``, ``reproduce``, ``price --lock`` and the review
(``diff BASE HEAD``, text, ``--json`` and Markdown); then here in a copy of passprice's own registry
(:func:`passprice.registry.embedded_root`; the shipped locks are re-locked by the lead, not here).

1. A pull request loosening a bound in ``schema/`` (a card value's minimum removed) is listed under "Schemas" and
   warned of, and changes no verdict: every file is validated with the package's schemas (``Root.schema``), so a fact
   only the loosened schema admits still fails the review (exit 2) and ``check``.
2. A measured run's ``build``, ``test`` and ``date`` are no price input: the fit reads a run's setting and tokens/s
   alone, so a lock made under the stack prices the same, its expected price too, and ``calibrate`` fits the same.
3. A stack's fitted fact's ``tolerance`` loosened by hand (0.001 → 0.5) let ``overhead.layer`` written 24 % off its
   re-fit (96.63 → 120 µs, the expected price 237.4 → 205.5 tokens/s) pass ``check``, and re-locked, the review read
   "1 re-locked", ✅, exit 0: the schema now bounds it at calibrate's 0.001.
4. A fit's ``errors`` (the hold-out errors a price under the stack prints: "with a card held out of the fit, its error
   was 6.9 % on average, 20.4 % at most") rewritten to 0.9 % and 2.45 % and re-locked read "1 re-locked", ✅, exit 0,
   and ``check`` said nothing ("not re-checked"): ``check`` now computes them again from the runs.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import attrs

from cli_helpers import REPO, invoke
from passprice import schema
from test_pin_27 import _copy
from test_slip_34 import printed, renderings  # one in-process review rendered per format
from test_slip_46 import RUNS, _stack_locked

STACK = "facts/stacks/llamacpp-cuda-2405.toml"
CARD = "facts/cards/h200_sxm_141gb.toml"
FITTED = ("overhead.pass, overhead.layer, share.read, share.append, share.array, share.float, share.vector, "
          "share.scale, terms.serial")


def _replace(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == count, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def _relock(root: Path, lock: str = "locks/r1-stack.lock.toml") -> None:
    made = invoke("lock", "--update", "-o", str(root / lock), root=root)
    assert made.exit_code == 0, made.output


def _relock_stale_fit(root: Path, lock: str = "locks/r1-stack.lock.toml") -> None:
    """Re-lock ``lock`` on a stack whose fit does not follow, as a passprice before tests/test_fix179.py wrote it:
    today's ``lock`` refuses it (``StaleFacts``, the fit named), so the lock is written with the fit check stood
    down, the state a review must still fail."""
    from unittest import mock

    from passprice.stackreach import FitCheck

    refused = invoke("lock", "--update", "-o", str(root / lock), root=root)
    assert refused.exit_code == 1 and "StaleFacts" in refused.stderr, refused.output
    with mock.patch("passprice.stackreach.fit_check", lambda _root, name: FitCheck(name)):
        _relock(root, lock)


def _loosened(tmp_path: Path) -> tuple[Path, Path]:
    base = _copy(tmp_path / "base", with_schema=True)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    # every card figure's "minimum": 1e-09 dropped from HEAD's copy of the card schema
    _replace(head / "schema" / "card.schema.json", '"minimum": 1e-09,\n', "", count=4)
    return base, head


def test_1_a_loosened_schema_alone_is_listed_and_warned_of(tmp_path: Path) -> None:
    base, head = _loosened(tmp_path)
    status, (text, markdown_text) = renderings(REPO, "text", "markdown", base=str(base), head=str(head))
    assert status == 0, text
    lines = text.splitlines()
    # the schema's warning and, beside it, check's line of the sources retrieved "unknown" (tests/test_fix154.py)
    assert lines[1] == ("no fact changed; 1 other file changed; no lock affected; 2 warnings of check on HEAD; 10 "
                        "locks unaffected")
    ours = schema.schema_dir() / "card.schema.json"
    warning = (f"schema/card.schema.json: differs from this passprice's copy, which it validates against (editors "
               f"validate against this one): copy {ours} over it")
    assert f"  warning: {warning}" in lines
    markdown = markdown_text.splitlines()
    assert markdown[0].startswith("⚠️ **passprice diff**")
    assert markdown[markdown.index("#### Schemas") + 2] == "- `schema/card.schema.json` (changed)"
    # markdown escapes an underscore that could start emphasis (an installed package's `passprice/\\_data/schema`)
    assert f"- ⚠️ warning: {warning}" in [line.replace("\\_", "_") for line in markdown]


def test_1_a_fact_only_the_loosened_schema_admits_still_fails_the_review(tmp_path: Path) -> None:
    base, head = _loosened(tmp_path)
    # on_chip.bandwidth: read by no term of the pricer, so no locked price moves: the schema alone must refuse it
    _replace(head / CARD, "[on_chip.bandwidth]\nvalue = 33.5\n", "[on_chip.bandwidth]\nvalue = 0\n")
    said = "facts/cards/h200_sxm_141gb.toml: on_chip.bandwidth.value: 0 is less than the minimum of 1e-09"
    # one review rendered as text, --json and markdown (each format's exit status is the review's)
    status, (_, as_json, _), err = printed(REPO, "text", "json", "markdown", base=str(base), head=str(head))
    assert status == 2, as_json
    review = json.JSONDecoder().raw_decode(as_json)[0]
    assert review["exit_status"] == 2
    assert review["head_unreadable"] == [said]
    # the file named once (it was named again before its problem)
    assert err.splitlines() == [f"passprice: error: {CARD} does not read on HEAD: {said.removeprefix(CARD + ': ')}"]
    checked = invoke("check", root=head)
    assert checked.exit_code == 2, checked.output
    assert f"passprice: error: {said}" in checked.stderr.splitlines()


def _figures(root: Path) -> dict[str, object]:
    priced = invoke("price", "--lock", "locks/r1-stack.lock.toml", "--json", root=root)
    assert priced.exit_code == 0, priced.output
    out = json.JSONDecoder().raw_decode(priced.stdout)[0]
    assert isinstance(out, dict)
    return out


def test_2_a_runs_build_test_and_date_move_no_price(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    _replace(head / RUNS, 'build = "e8496488 (2843)"\ntest = "tg512"\nnote = "± 0.80',
             'build = "deadbeef (2999)"\ntest = "tg128"\ndate = "2020-01-01"\nnote = "± 0.80')
    before, after = _figures(base), _figures(head)
    assert after == before
    assert after["expected"]["tokens_per_s"] == before["expected"]["tokens_per_s"]  # type: ignore[index]
    fitted = [json.JSONDecoder().raw_decode(invoke("calibrate", "--stack", "llamacpp-cuda-2405", "--dry-run",
                                                   "--json", root=root).stdout)[0] for root in (base, head)]
    assert fitted[1] == fitted[0]
    assert invoke("reproduce", "locks/r1-stack.lock.toml", root=head).exit_code == 0
    assert invoke("check", "--frozen", root=head).exit_code == 0


def test_3_a_fit_tolerance_past_calibrates_is_refused_naming_the_key(tmp_path: Path) -> None:
    _, head = _stack_locked(tmp_path)
    text = (head / STACK).read_text(encoding="utf-8")
    (head / STACK).write_text(text.replace("tolerance = 0.001\n", "tolerance = 0.5\n", 1), encoding="utf-8")
    _replace(head / STACK, "value = 96.63\n", "value = 120\n")
    said = "overhead.pass.derivation.tolerance: 0.5 is greater than the maximum of 0.001"
    # check names the file from the root, price (as for any stack file that does not read) by its whole path
    for args, where in ((("check",), STACK), (("price", "--lock", "locks/r1-stack.lock.toml"), str(head / STACK))):
        result = invoke(*args, root=head)
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines() == [f"passprice: error: {where}: {said}"]


def test_3_a_fit_tolerance_loosened_beside_a_moved_value_fails_the_review_re_locked(tmp_path: Path) -> None:
    base, head = _stack_locked(tmp_path)
    text = (head / STACK).read_text(encoding="utf-8")
    assert text.count("tolerance = 0.001\n") == 9
    (head / STACK).write_text(text.replace("tolerance = 0.001\n", "tolerance = 0.5\n"), encoding="utf-8")
    _replace(head / STACK, "value = 96.63\n", "value = 120\n")
    # before: check "0 problems", lock --update wrote it, and the review read "1 re-locked", ✅, exit 0
    assert invoke("lock", "--update", "-o", str(head / "locks/r1-stack.lock.toml"), root=head).exit_code == 2
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 2, result.output
    assert ("facts/stacks/llamacpp-cuda-2405.toml: terms.serial.derivation.tolerance: 0.5 is greater than the maximum "
            "of 0.001") in result.stdout


def _errors_rewritten(head: Path) -> None:
    _replace(head / STACK, "card_out_mean = 0.069, card_out_max = 0.2045",
             "card_out_mean = 0.009, card_out_max = 0.0245", count=9)


ERRORS_SAID = (f"facts/stacks/llamacpp-cuda-2405.toml: {FITTED}: the fit's errors recorded are not the ones its 111 "
               "runs give again: card_out_mean: 0.9 % (re-fitted: 6.9 %); card_out_max: 2.45 % (re-fitted: 20.45 %) "
               "(a price under the stack prints them; run passprice calibrate --stack llamacpp-cuda-2405)")


@functools.cache
def _errors_relocked_made() -> Path:
    """HEAD of :func:`_stack_locked` with the fit's errors rewritten (:func:`_errors_rewritten`) and ``r1-stack``
    re-locked, made once a process (in a temporary folder removed at exit) for the two tests that start from it: a
    copy is ~0.02 s of CPU where the re-lock was ~0.4 s (session 39). Its bytes do not depend on its folder."""
    import atexit
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="passprice-errors-relocked-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    _, head = _stack_locked(folder)
    _errors_rewritten(head)
    _relock_stale_fit(head)
    return head


def _errors_relocked(tmp_path: Path) -> tuple[Path, Path]:
    """:func:`_stack_locked`'s BASE, and a copy of :func:`_errors_relocked_made` as HEAD."""
    base, head = _stack_locked(tmp_path)
    shutil.rmtree(head)
    shutil.copytree(_errors_relocked_made(), head)
    return base, head


def test_4_a_fits_errors_rewritten_fail_check(tmp_path: Path) -> None:
    _, head = _errors_relocked(tmp_path)
    # the price under the lock prints the rewritten errors: "its error was 0.9 % on average, 2.45 % at most"
    assert "its error was 0.9 % on average, 2.45 % at most" in invoke(
        "price", "--lock", "locks/r1-stack.lock.toml", root=head).stderr
    checked = invoke("check", root=head)
    assert checked.exit_code == 1, checked.output  # before: 0, "all holds"
    assert f"  {ERRORS_SAID}" in checked.stdout.splitlines()


def test_4_a_fits_errors_rewritten_and_re_locked_fail_the_review(tmp_path: Path) -> None:
    base, head = _errors_relocked(tmp_path)
    status, (text, as_json, markdown_text) = renderings(REPO, "text", "json", "markdown", base=str(base),
                                                        head=str(head))
    # before: "9 stack facts changed in 1 file; 1 lock affected, 1 re-locked", ✅, exit 0
    assert status == 1, text
    assert text.splitlines()[1] == (
        "9 stack facts changed in 1 file; 2 locks affected, 2 rest on derived facts that do not follow, 1 to re-pin "
        "(lock --update) for check --frozen, 1 re-locked; HEAD fails passprice check (1 problem); 9 locks unaffected")
    review = json.JSONDecoder().raw_decode(as_json)[0]
    assert review["head_check"] == [ERRORS_SAID]
    markdown = markdown_text.splitlines()
    assert markdown[0].startswith("❌ **passprice diff**")


def test_4_the_shipped_stacks_errors_are_the_ones_their_runs_give() -> None:
    from passprice.calibrate import stack_findings
    from passprice.measurements import load_runs
    from passprice.registry import embedded_root
    from passprice.stacks import load_stack

    root = embedded_root()
    runs = load_runs(root)
    for name in ("llamacpp-cuda-2405", "lmdeploy-turbomind-2312"):
        assert stack_findings(root, load_stack(root, name), runs) == ()


MI_LOCK = "locks/mi-stack.lock.toml"
MI300X = "facts/cards/mi300x.toml"


#: the locked copy :func:`_mi_stack` copies, once made
_MI_MADE: dict[str, Path] = {}


def _mi_stack(tmp_path: Path) -> tuple[Path, Path]:
    """BASE: a copy holding ``locks/mi-stack.lock.toml`` (r1's checkpoint on the MI300X at batch 1 under the stack
    ``llamacpp-cuda-2405``, fitted on NVIDIA's cards alone); HEAD: a copy of it. The locked copy is made once a
    process (in the first caller's ``tmp_path``, kept until pytest removes old temporary folders) and copied for
    each caller: copying it costs 0.03 s of CPU, making it 0.3-1.3 s."""
    template = _MI_MADE.get("base")
    if template is None:
        template = _copy(tmp_path / "mi-template", with_schema=True)
        made = invoke("lock", "--checkpoint", "deepseek-r1-distill-qwen-7b-q4_k_m", "--card", "mi300x", "--stack",
                      "llamacpp-cuda-2405", "--batch", "1", "--limit", "4096", "--position", "2048", "--name",
                      "mi-stack", root=template)  # fmt: skip
        assert made.exit_code == 0, made.output
        _MI_MADE["base"] = template
    base = tmp_path / "base"
    shutil.copytree(template, base)
    head = tmp_path / "head"
    shutil.copytree(base, head)
    return base, head


KERNELS = ("; and every card its runs measured has vendor NVIDIA, mi300x has vendor AMD: the stack's kernels never "
           "ran on such a card as measured, so its facts may not describe the runtime there at all")
CARD_VENDOR = "stack.llamacpp-cuda-2405.card_vendor: [AMD → NVIDIA] (the lock pinned the old)"


def test_5_a_lock_under_a_stack_pins_the_vendors_its_card_warning_reads(tmp_path: Path) -> None:
    base, _ = _mi_stack(tmp_path)
    text = (base / MI_LOCK).read_text(encoding="utf-8")
    table = text[text.index("\n[stack]\n"):].split("\n\n")[0].splitlines()
    assert 'card_vendor = "AMD"' in table
    assert 'fitted_vendors = ["NVIDIA"]' in table
    priced = invoke("price", "--lock", MI_LOCK, root=base)
    assert priced.exit_code == 0, priced.output
    assert KERNELS in priced.stderr


def test_5_a_card_vendor_rewritten_is_said_by_check_reproduce_price_and_the_review(tmp_path: Path) -> None:
    base, head = _mi_stack(tmp_path)
    _replace(head / MI300X, 'vendor = "AMD"', 'vendor = "NVIDIA"')
    priced = invoke("price", "--lock", MI_LOCK, root=head)
    assert priced.exit_code == 0, priced.output
    assert KERNELS not in priced.stderr  # the warning the vendor silenced: the lock now says why
    assert f"                relabelled since the lock: {CARD_VENDOR}" in priced.stdout.splitlines()
    checked = invoke("check", "--frozen", root=head)
    assert checked.exit_code == 1, checked.output  # before: 0
    assert f"    {CARD_VENDOR}" in checked.stdout.splitlines()
    reproduced = invoke("reproduce", MI_LOCK, root=head)
    assert f"    relabelled     {CARD_VENDOR}" in reproduced.stdout.splitlines()
    status, (text, as_json, markdown_text) = renderings(REPO, "text", "json", "markdown", base=str(base),
                                                        head=str(head))
    assert status == 0, text
    lines = text.splitlines()
    # before: "no fact changed; no lock affected; 9 locks unaffected", ✅
    assert lines[1] == ("no fact changed; 1 lock affected, 1 to re-pin (lock --update) for check --frozen; 10 locks "
                        "unaffected")
    assert ("  mi-stack (locks/mi-stack.lock.toml, card mi300x, price): pins stack.llamacpp-cuda-2405.card_vendor as "
            "before the change, the price unmoved by it: re-pin (passprice lock --update -o locks/mi-stack.lock.toml; "
            "check --frozen fails until then)") in lines
    review = json.JSONDecoder().raw_decode(as_json)[0]
    assert review["drifted"] == ["mi-stack"]
    markdown = markdown_text.splitlines()
    assert markdown[0].startswith("⚠️ **passprice diff**")


def test_5_a_fitted_cards_vendor_rewritten_is_said_too(tmp_path: Path) -> None:
    base, head = _mi_stack(tmp_path)
    _replace(head / "facts/cards/a100_pcie_80gb.toml", 'vendor = "NVIDIA"', 'vendor = "AMD"')
    priced = invoke("price", "--lock", MI_LOCK, root=head)
    assert "mi300x has vendor AMD" not in priced.stderr  # AMD is now among the fitted cards' vendors
    said = "stack.llamacpp-cuda-2405.fitted_vendors: [ → AMD, ]NVIDIA (the lock pinned the old)"
    assert f"                relabelled since the lock: {said}" in priced.stdout.splitlines()
    checked = invoke("check", "--frozen", root=head)
    assert checked.exit_code == 1, checked.output
    assert f"    {said}" in checked.stdout.splitlines()
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 0, result.output
    assert ("  mi-stack (locks/mi-stack.lock.toml, card mi300x, price): pins stack.llamacpp-cuda-2405.fitted_vendors "
            "as before the change, the price unmoved by it: re-pin (passprice lock --update -o "
            "locks/mi-stack.lock.toml; check --frozen fails until then)") in result.stdout.splitlines()


def _restack(path: Path, **pins: object) -> None:
    from passprice.locks import lock_text, read_lock

    lock = read_lock(path, schema.schema_dir())
    assert lock.stack is not None
    path.write_text(lock_text(attrs.evolve(lock, stack=attrs.evolve(lock.stack, **pins))), encoding="utf-8")


def test_5_a_hand_forged_vendor_pin_fails_the_review(tmp_path: Path) -> None:
    base, head = _mi_stack(tmp_path)
    _restack(head / MI_LOCK, card_vendor="NVIDIA")  # digests recomputed; the card still AMD's
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 1, result.output
    forged = (f"  {MI_LOCK}: stack.llamacpp-cuda-2405.card_vendor: pins 'NVIDIA', which neither side of the change "
              "holds and BASE's lock did not pin")
    assert any(line.startswith(forged) for line in result.stdout.splitlines()), result.stdout


def test_5_a_lock_stripped_of_its_vendors_beside_their_edit_fails_the_review(tmp_path: Path) -> None:
    base, head = _mi_stack(tmp_path)
    _restack(head / MI_LOCK, card_vendor=None, fitted_vendors=None)  # as a lock written before slip 48 reads
    _replace(head / MI300X, 'vendor = "AMD"', 'vendor = "NVIDIA"')
    assert invoke("check", "--frozen", root=head).exit_code == 0  # a lock pinning none: nothing to say
    result = invoke("diff", str(base), str(head))
    assert result.exit_code == 1, result.output
    dropped = (f"  {MI_LOCK}: stack.llamacpp-cuda-2405.fitted_vendors: dropped, which BASE's lock pinned (a label "
               "audit or a price shows: its change would go unsaid by check, reproduce and price): a lock is written "
               f"by passprice lock, never trimmed by hand; re-lock it: passprice lock --update -o {MI_LOCK}")
    assert dropped in result.stdout.splitlines()

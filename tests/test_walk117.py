"""What a new user with only the README found (issue 13's review, reproduce and audit uses), each failing input kept.

The items, by the section of this file:

1. A card copied from another kept the other card's measurement silently: the MI300X's file copied for an MI325X,
   its bandwidth set to 6 TB/s and ``fact recompute`` run as ``fact set``'s hint said, the stream shares stayed
   "measured" (the MI300X's BabelStream over 6 TB/s) and ``check`` said 0 problems once they were recomputed. Now
   ``fact set``'s hint, ``fact recompute`` and ``check`` warn of each measured fact citing the place another card's
   measured fact cites (the question ``diff`` asks, :func:`passprice.addedfacts.another_cards`) (test_1_*).
2. A lock named by its digest: ``audit 78f51adf53ad`` exited 2 "name the lock by its name or file" though the README
   has ``audit DIGEST --batch 3``: a digest (short, full, with ``sha256:``) naming exactly one lock in ``locks/`` is
   that lock for ``audit``, ``reproduce`` and ``price --lock`` (test_2_*).
3. ``reproduce`` of a lock copied into a fresh ``init`` registry's ``locks/`` said its serving "is no longer
   registered", a serving the registry never had: "no longer" only where the registry's git history holds the
   serving's file (test_3_*).
4. ``price r1-qwen7b-h200 --card H200_SXM_141GB`` said "did you mean h200_sxm_141gb?" and then how to add a card
   of one's own named H200_SXM_141GB: a name that is a registered one but for case (or ``-``/``_``) is answered
   with the suggestion alone, for cards, servings, checkpoints, stacks, routing records and locks (test_4_*).
5. ``audit r1-qwen7b-h200 --card sn40l``: the SN40L Hot Chips deck's record named no stored excerpt though its
   ``read:`` says the lines are in sources/excerpts/cite71-excerpt.txt; the README said that file held only the
   Hopper whitepaper's lines (test_5_*).
6. ``fact show --help`` said "Show fact PATH of card NAME" though it reads stacks' and routing records' facts
   (test_6_*).
7. ``diff``'s text listed a serving at ``21,584.2 → 21,584.2 (+0 %)`` (only memory_s moved) under "servings no
   lock pins whose price moves" and the summary counted it as moving: a price that did not move is not counted as
   moving, and the term that moved is named, as the markdown's "+0 % (memory_s moved)" did (test_7_*, with
   tests/test_review_unlocked.py's review).
8. ``init --examples scratch`` run inside a checkout copied the checkout's working tree, edits included, saying only
   "copied from /tmp/x/review": it now warns, naming the files with uncommitted changes (test_8_*).
9. The two 80 GB H100s: ``cards`` listed the SXM5 at 80 GB (the product page's marketed figure) and the PCIe at
   85.52 GB (nvidia-smi's 81,559 MiB), a larger max-batch for the slower card, and only the facts' notes said
   why: ``cards`` (a ``memory is`` column), ``compare`` and ``max-batch`` say which a capacity is (test_9_*).
10. ``audit``'s header of a document printed ``(AMD, unknown)`` while its ``read:`` names the 2025 edition: the
    header says the edition the record states (test_10_*).
11. The README tour's ``price r1-qwen7b-h200 --stack llamacpp-cuda-2405`` warns twice, its comment now says it
    extrapolates (test_11_*).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

from cli_helpers import REPO, copy_card, copy_root, invoke
from passprice.review import Diff, diff_markdown, diff_text
from test_review_unlocked import reviewed  # noqa: F401 - the review of tests/test_review_unlocked.py, a fixture

Q3 = "qwen3-30b-a3b-h200"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false",
                    *args], cwd=root, check=True, capture_output=True)


# --- 1. a copied card's measurements -------------------------------------------------------------------------------

BORROWED = ("passprice: warning: facts/cards/mi325x.toml: streams.read is measured but cites the same place as another "
            "card's measured fact (facts/cards/mi300x.toml: streams.read cites the same place, another card's: does "
            "ai-benchmarking-guide-fork-samuel-bohman: Azure_Results/ND_MI300X_v5_results.md (AMD Instinct MI300X, "
            "ROCm, HIP 6.2), HBM Bandwidth table (BabelStream): row '| Dot | 3.87 |' in TB/s state dot 3.87 TB/s, the "
            "input its derivation dot / bandwidth reads there (not its 0.645) of what facts/cards/mi325x.toml "
            "describes?): one measurement is of one device; re-cite it to a measurement of this card, or mark it "
            "estimated (`passprice fact set --provenance estimated`, saying whose figure it is in its note)")


def test_1_a_copied_cards_measurements_are_named_by_set_recompute_and_check(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    copy_card(root / "facts" / "cards" / "mi300x.toml", root / "facts" / "cards" / "mi325x.toml")
    # the shipped registry has no measured fact citing another card's measured place: check warns of none
    assert "is measured but cites the same place" not in invoke("check").output
    done = invoke("fact", "set", "mi325x", "memory.bandwidth", "--value", "6", "--unit", "TB/s", "--provenance",
                  "published", "--source", "amd-rocm-gpu-specs", "--locator", "MI325X: 6 TB/s", root=root)
    assert done.exit_code == 0, done.output
    lines = done.stderr.splitlines()
    assert ("passprice: warning: facts/cards/mi325x.toml: `passprice fact recompute mi325x` writes them from today's "
            "inputs once the measurements they rest on are this card's (below: another card's measured facts cite "
            "the same places) (`passprice diff` fails a change that leaves a derived fact stale)") in lines
    said = [x for x in lines if "is measured but cites the same place as another card's measured fact" in x]
    assert [x.split(": ")[3].split(" is measured")[0] for x in said] == [
        "host.stream", "streams.append", "streams.read", "streams.rewrite"]
    recomputed = invoke("fact", "recompute", "mi325x", root=root)
    assert recomputed.exit_code == 0, recomputed.output
    assert "facts/cards/mi325x.toml: streams.read: 0.7302 -> 0.645 (recomputed from today's inputs)" in (
        recomputed.stdout.splitlines())
    assert BORROWED in recomputed.stderr.splitlines()
    checked = invoke("check", root=root)
    assert checked.exit_code == 0, checked.output  # a warning: which card is the copy, no file says (DESIGN.md)
    assert "0 problems" in checked.stdout
    shown = [x.strip() for x in checked.output.splitlines()]
    assert BORROWED.replace("passprice: warning: ", "warning: ") in shown
    # both cards are named: the MI300X's own shares cite the place the copy's do
    assert any(x.startswith("warning: facts/cards/mi300x.toml: streams.read is measured but") for x in shown)
    # re-marked estimated, the copy's share is no longer named
    fixed = invoke("fact", "set", "mi325x", "streams.read", "--value", "0.645", "--unit", "1", "--provenance",
                   "estimated", "--source", "ai-benchmarking-guide-fork-samuel-bohman", "--locator",
                   "the MI300X's BabelStream Dot 3.87 TB/s over 6 TB/s", root=root)
    assert fixed.exit_code == 0, fixed.output
    after = invoke("check", root=root).output
    assert "mi325x.toml: streams.read is measured" not in after and "mi325x.toml: streams.append is measured" in after


# --- 2. a lock named by its digest -------------------------------------------------------------------------------

#: r1-qwen7b-h200-best's [lock] digest, read from its file (a re-lock moves it; the README's example follows)
BEST = tomllib.loads((REPO / "locks" / "r1-qwen7b-h200-best.lock.toml").read_text(encoding="utf-8"))["lock"]["digest"]
SHORT = BEST.removeprefix("sha256:")[:12]


def test_2_a_digest_naming_one_lock_is_that_lock() -> None:
    for ref in (SHORT, BEST, BEST.removeprefix("sha256:"), SHORT[:8].upper()):
        result = invoke("reproduce", ref)
        assert result.exit_code == 0, (ref, result.output)
        assert result.stdout.startswith("r1-qwen7b-h200-best (locks/r1-qwen7b-h200-best.lock.toml): best lock"), ref
        assert f"  lock digest {BEST} (its [lock] digest, verified" in result.stdout, ref
        audit = invoke("audit", ref)
        assert audit.exit_code == 0, (ref, audit.output)
        assert audit.stdout.startswith("audit of lock r1-qwen7b-h200-best (pinned facts):"), ref
    # the README's `audit DIGEST --batch 3`: the error of a serving option given to a lock, naming the lock
    batch = invoke("audit", SHORT, "--batch", "3")
    assert batch.exit_code == 2, batch.output
    assert batch.stderr.startswith("passprice: error: audit: --batch cannot apply to lock r1-qwen7b-h200-best"), (
        batch.stderr)
    price = invoke("price", "--lock", SHORT)
    assert price.exit_code == 0, price.output
    # a digest no lock here has is still the error that says so
    none = invoke("reproduce", "sha256:00000000")
    assert none.exit_code == 2 and "no lock in" in none.stderr and "has that [lock] digest" in none.stderr


def test_2_the_readme_says_a_digest_is_the_lock() -> None:
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert (f"`passprice reproduce {SHORT}` (`r1-qwen7b-h200-best`'s `[lock] digest`, its first 12 hex digits, "
            "or 8 or more of them, or all 64 with or without `sha256:`), is the one lock in `locks/`") in readme
    assert "is an error naming the lock whose `[lock] digest` begins with it" not in readme
    assert "A lock, named by its file, its name or its digest, pins its card" in readme


# --- 3. "no longer registered" only where history shows it was ----------------------------------------------------


def test_3_a_lock_copied_into_a_registry_that_never_had_its_serving(tmp_path: Path) -> None:
    root = tmp_path / "mine"
    assert invoke("init", str(root)).exit_code == 0
    shutil.copy(REPO / "locks" / f"{Q3}.lock.toml", root / "locks")
    shutil.copy(REPO / "registry" / "checkpoints" / "qwen3-30b-a3b-q4_k_m.toml", root / "registry" / "checkpoints")
    result = invoke("reproduce", Q3, root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert f"    serving        serving {Q3} is not registered here (priced as the lock embeds it)" in lines
    assert "no longer registered" not in result.stdout


def test_3_a_serving_removed_in_the_registrys_history_is_no_longer_registered(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    (root / "registry" / "servings" / f"{Q3}.toml").unlink()
    result = invoke("reproduce", Q3, root=root)
    assert result.exit_code == 0, result.output
    assert (f"    serving        serving {Q3} is no longer registered (priced as the lock embeds it)"
            in result.stdout.splitlines())
    price = invoke("price", "--lock", Q3, root=root)
    assert price.exit_code == 0, price.output
    assert f"drifted since the lock: serving: {Q3} is no longer registered (priced as the lock embeds it)" in (
        price.stdout)


def test_3_a_lock_copied_into_a_git_registry_that_never_had_its_checkpoint(tmp_path: Path) -> None:
    """The same walk, its checkpoint: a lock copied into ``locks/`` of a fresh git registry said its pinned checkpoint
    "is gone from this registry", an entry that registry never had; where git shows the entry once there, "gone"."""
    root = tmp_path / "mine"
    assert invoke("init", str(root)).exit_code == 0
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    shutil.copy(REPO / "locks" / f"{Q3}.lock.toml", root / "locks")
    never = invoke("reproduce", Q3, root=root)
    assert never.exit_code == 1, never.output
    assert ("  cannot be reproduced here: the pinned checkpoint qwen3-30b-a3b-q4_k_m is not in this registry; "
            in never.stdout)
    assert "gone from this registry" not in never.stdout
    entry = root / "registry" / "checkpoints" / "qwen3-30b-a3b-q4_k_m.toml"
    shutil.copy(REPO / "registry" / "checkpoints" / entry.name, entry)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the entry")
    entry.unlink()
    gone = invoke("reproduce", Q3, root=root)
    assert gone.exit_code == 1, gone.output
    assert "  cannot be reproduced here: the pinned checkpoint qwen3-30b-a3b-q4_k_m is gone from this registry; " in (
        gone.stdout)


# --- 6. fact's help -----------------------------------------------------------------------------------------------


def test_6_fact_help_names_every_record_it_reads(tmp_path: Path) -> None:
    shown = " ".join(invoke("fact", "show", "--help").output.split())
    assert "Show fact PATH of NAME, a card, a serving stack (facts/stacks: share.read) or a routing record" in shown
    assert "NAME is a drafting method (facts/drafts), not a card, serving stack or routing record." in shown
    assert "Show fact PATH of card NAME" not in shown
    group = " ".join(invoke("fact", "--help").output.split())
    assert "Show one fact of a card, a serving stack, a routing record or (--draft) a drafting method" in group
    for command in ("set", "recompute"):
        said = " ".join(invoke("fact", command, "--help").output.split())
        assert "of card NAME (or, with --draft, of a drafting method)" in said, command
    # what the help says it reads, it reads (exit 0)
    stack = invoke("fact", "show", "llamacpp-cuda-2405", "share.read")
    assert stack.exit_code == 0 and "a serving stack" in stack.output.splitlines()[0], stack.output
    routing = invoke("fact", "show", "qwen3-30b-a3b-measured", "routing.hot_share")
    assert routing.exit_code == 0, routing.output
    # and set refuses a stack's fact by name (exit 2)
    root = copy_root(tmp_path)
    refused = invoke("fact", "set", "llamacpp-cuda-2405", "share.read", "--value", "0.5", "--unit", "1",
                     "--provenance", "assumed", "--source", "passprice-card-review", "--locator", "x", root=root)
    assert refused.exit_code == 2, refused.output
    assert "llamacpp-cuda-2405.toml), not a card: the fact commands edit cards" in refused.stderr, refused.stderr

# --- 4. a slip of case or '-'/'_' ---------------------------------------------------------------------------------

SLIP = "names are matched exactly)"


def test_4_a_name_but_for_case_stops_at_the_suggestion() -> None:
    cases = [
        (("price", "r1-qwen7b-h200", "--card", "H200_SXM_141GB"),
         "passprice: error: card 'H200_SXM_141GB': not found in facts/cards; did you mean h200_sxm_141gb? (the name "
         f"differs only in case; {SLIP}"),
        (("price", "r1-qwen7b-h200", "--card", "h200-sxm-141gb"),
         "passprice: error: card 'h200-sxm-141gb': not found in facts/cards; did you mean h200_sxm_141gb? (the name "
         f"differs only in '-' vs '_'; {SLIP}"),
        (("price", "R1_QWEN7B_H200"),
         "passprice: error: serving 'R1_QWEN7B_H200': not found in registry/servings; did you mean r1-qwen7b-h200? "
         f"(the name differs only in case and in '-' vs '_'; {SLIP}"),
        (("price", "--checkpoint", "Deepseek-R1-distill-qwen-7b-q4_k_m", "--card", "h200_sxm_141gb"),
         "passprice: error: checkpoint 'Deepseek-R1-distill-qwen-7b-q4_k_m': not found in registry/checkpoints; did "
         f"you mean deepseek-r1-distill-qwen-7b-q4_k_m? (the name differs only in case; {SLIP}"),
        (("price", "r1-qwen7b-h200", "--stack", "LLAMACPP-cuda-2405"),
         "passprice: error: stack 'LLAMACPP-cuda-2405': not found in facts/stacks; did you mean llamacpp-cuda-2405? "
         f"(the name differs only in case; {SLIP}"),
        (("fact", "show", "H200_SXM_141GB"),
         "passprice: error: card 'H200_SXM_141GB': not found in facts/cards; did you mean h200_sxm_141gb? (the name "
         f"differs only in case; {SLIP}"),
    ]
    for args, line in cases:
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.splitlines() == [line], args
    for command in ("reproduce", "audit"):
        result = invoke(command, "R1-QWEN7B-H200-BEST")
        assert result.exit_code == 2, result.output
        [line] = result.stderr.splitlines()
        assert line.startswith("passprice: error: lock 'R1-QWEN7B-H200-BEST': no such file, and not in "), line
        assert line.endswith(f"/locks; did you mean r1-qwen7b-h200-best? (the name differs only in case; {SLIP}"), line
    # a name that is no slip keeps the closest names, the list and how to add a card
    other = invoke("price", "r1-qwen7b-h200", "--card", "rtx5090")
    assert other.exit_code == 2 and "a card not registered is a file of your own" in other.stderr


# --- 5. the SN40L deck's stored excerpt ---------------------------------------------------------------------------


def test_5_the_sn40l_deck_names_its_stored_excerpt() -> None:
    result = invoke("audit", "r1-qwen7b-h200", "--card", "sn40l")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = lines.index("  sambanova-sn40l-hot-chips-2024 — SambaNova SN40L RDU: Breaking the Barrier of Trillion+ "
                     "Parameter Scale Gen AI Computing (Hot Chips 2024, 2024)")
    block = lines[at + 1:at + 7]
    assert ("    stored excerpt: sources/excerpts/cite71-excerpt.txt (the lines quoted from the text read, "
            "from the registry's top folder)"
            in block), block


def test_5_the_readme_lists_what_each_excerpt_file_holds() -> None:
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    start = readme.index("The 13 files, and what each holds:")
    said = readme[start:readme.index("No figure of a document outside them", start)]
    files = sorted(p.name for p in (REPO / "sources" / "excerpts").glob("*.txt"))
    assert len(files) == 13
    assert sorted(set(re.findall(r"`([\w.-]+-excerpt\.txt)`", said))) == files
    assert ("`cite71-excerpt.txt`, the Hopper whitepaper's lines, the SN40L Hot Chips 2024 deck's slide text" in said)


# --- 7. a term that moved alone -------------------------------------------------------------------------------------


def test_7_a_price_that_did_not_move_is_not_counted_as_moving(
    reviewed: tuple[Diff, list[list[str]]],  # noqa: F811 - the fixture imported above
) -> None:
    d, _ = reviewed
    chat, nxt = d.unlocked
    assert (chat.name, chat.price_moved, chat.moved) == ("qwen35-27b-h200-chat", False, "memory_s")
    assert (nxt.name, nxt.price_moved) == ("qwen3next-80b-a3b-h200", True)
    assert d.summary().endswith("; 1 serving no lock pins moves, 1 more only a term of its price (memory_s) (not "
                                "locked, informational)")
    text = diff_text(d).splitlines()
    at = text.index("servings no lock pins whose price (or only a term of it) moves (informational: nothing pins "
                    "them, so they cannot fail the review; lock one to have reviews judge it)")
    assert text[at + 1:at + 5] == [
        "  qwen35-27b-h200-chat (card h200_sxm_141gb): NOT LOCKED, memory_s moved",
        "    changed   streams.rewrite",
        "    tokens/s  21,584.2 → 21,584.2  (+0 %: memory_s moved, the price did not)",
        "    moved     memory_s 0.023263507212292995 → 0.02404219291214544 (+3.347 %)",
    ]
    assert "    tokens/s  4,038.8 → 3,971.6  (-1.665 %)" in text
    assert "price did not" not in "\n".join(diff_markdown(d).splitlines())
    assert ("| `qwen35-27b-h200-chat` (not locked) | `streams.rewrite` | 21,584.2 | 21,584.2 | +0 % (memory_s moved) "
            "| array |") in diff_markdown(d)
    # the README's review transcript says the same
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.count("9 locks unaffected; 1 serving no lock pins moves, 1 more only a term of its price (memory_s) "
                        "(not locked, informational)") == 2
    assert "2 servings no lock pins move" not in readme


# --- 8. init inside an edited checkout ------------------------------------------------------------------------------


def test_8_init_names_the_uncommitted_files_it_copies(tmp_path: Path) -> None:
    source = copy_root(tmp_path)
    shutil.copytree(REPO / "schema", source / "schema")
    _git(source, "init", "-q")
    _git(source, "add", "-A")
    _git(source, "commit", "-q", "--no-verify", "-m", "registry")
    clean = invoke("init", "--examples", str(tmp_path / "clean"), root=source)
    assert clean.exit_code == 0, clean.output
    assert "uncommitted" not in clean.stderr
    card = source / "facts" / "cards" / "h200_sxm_141gb.toml"
    card.write_text(card.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    (source / "locks" / "r1-qwen7b-h200.lock.toml").unlink()
    made = invoke("init", "--examples", str(tmp_path / "scratch"), root=source)
    assert made.exit_code == 0, made.output
    assert made.stderr.splitlines() == [
        f"passprice: warning: the reference files were copied from the working tree of {source}, a git checkout with "
        "uncommitted changes to facts/cards/h200_sxm_141gb.toml, locks/r1-qwen7b-h200.lock.toml: the new registry "
        "holds them as edited there, not as committed (nor as the package ships them: run init outside the checkout "
        "for those)"
    ]
    assert f"  facts/cards/            copied from {source}" in made.stdout.splitlines()
    assert (tmp_path / "scratch" / "facts" / "cards" / "h200_sxm_141gb.toml").read_text(
        encoding="utf-8").endswith("# edited\n")


# --- 9. datasheet or device capacity ---------------------------------------------------------------------------------


def test_9_cards_compare_and_max_batch_say_what_a_capacity_is() -> None:
    listed = invoke("cards")
    assert listed.exit_code == 0, listed.output
    lines = listed.stdout.splitlines()
    assert lines[0].endswith("host link     memory is")
    row = {line.split()[0]: line for line in lines[2:] if line[:1].isalnum()}
    assert row["h100_sxm5_80gb"].split()[-1] == "datasheet" and " 80 GB " in row["h100_sxm5_80gb"]
    assert row["h100_pcie_80gb"].split()[-1] == "device" and " 85.52 GB " in row["h100_pcie_80gb"]
    assert row["ws1_hypothetical"].split()[-1] == "assumed"
    assert ("memory is: `datasheet`, the figure the maker markets (published, decimal GB); `device`, what the device "
            "reports (measured: nvidia-smi's MiB, some GB above the marketed figure on one part): a max-batch bounded "
            "by memory compares the two as given") in lines
    compared = invoke("compare", "r1-qwen7b-h200", "--cards", "h100_sxm5_80gb,h100_pcie_80gb")
    assert compared.exit_code == 0, compared.output
    assert ("  memory        the datasheet's marketed figure: h100_sxm5_80gb; what the device reports: h100_pcie_80gb "
            "(a batch bounded by memory compares the two as given; `passprice max-batch` names each source)") in (
        compared.stdout.splitlines())
    # by hand: ⌊(80e9 − 4.677e9) / 234.9e6⌋ = 320 and ⌊(81,559 MiB − 4.677e9) / 234.9e6⌋ = ⌊80.84e9 / 234.9e6⌋ = 344
    for card, n, said in (("h100_sxm5_80gb", 320, "  memory  80 GB is the datasheet's marketed figure (published, "
                                                   "nvidia-h100-product-page)"),
                          ("h100_pcie_80gb", 344, "  memory  85.52 GB is what the device reports (measured, "
                                                   "xiongjiedai-gpu-benchmarks)")):
        result = invoke("max-batch", "r1-qwen7b-h200", "--card", card)
        assert result.exit_code == 0, result.output
        out = result.stdout.splitlines()
        assert out[0].endswith(f"on {card}: at most {n:,} sequences a pass") and said in out, out
    # on the same basis alone (two datasheet figures), compare adds no line
    same = invoke("compare", "r1-qwen7b-h200", "--cards", "h100_sxm5_80gb,h200_sxm_141gb")
    assert "  memory        " not in same.stdout


# --- 10. the edition the record states ----------------------------------------------------------------------------


def test_10_the_header_says_the_edition_read() -> None:
    result = invoke("audit", "r1-qwen7b-h200", "--card", "mi300x")
    assert result.exit_code == 0, result.output
    assert ("  amd-cdna3-whitepaper — Introducing AMD CDNA 3 Architecture (white paper) (AMD, unknown; the copy read: "
            "the 2025 edition, '©2025', PID#2258402-B)") in result.output.splitlines()
    result = invoke("audit", "--source", "amd-cdna3-whitepaper")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[2].startswith(
        "  AMD · whitepaper · unknown; the copy read: the 2025 edition, '©2025', PID#2258402-B · https://www.amd.com/")
    # a record whose read states no edition is as before
    result = invoke("audit", "--source", "nvidia-h200-product-page")
    assert "  NVIDIA · " in result.output and "the copy read:" not in result.output


# --- 11. the tour's extrapolated stack price ----------------------------------------------------------------------


def test_11_the_tour_says_the_stack_price_extrapolates() -> None:
    result = invoke("price", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405")
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("passprice: warning:")]
    assert len(warnings) == 2, warnings
    assert "not h200_sxm_141gb: its expected price here extrapolates across cards" in warnings[0]
    assert "is 0.2384 × the limit" in warnings[1] and "outside the 0.3425 … 0.8519 ×" in warnings[1]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if x.startswith("passprice price r1-qwen7b-h200 --stack llamacpp"))
    assert "extrapolated" in line and "0.2384 × the limit" in line and "0.3425 … 0.8519 ×" in line

"""Slip round 53 (issue 13): locks and reviews that a change slipped past. Each test builds its reproducer (a lock
re-locked by this code into a private copy of the registry, then edited by hand and re-digested, as an attacker who
knows the digest rule writes it) and asserts the exit status and the words said."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from cli_helpers import LISTED_MODEL, copy_root, invoke, refused
from test_slip_34 import renderings  # one in-process review rendered per format

R1 = "locks/r1-qwen7b-h200.lock.toml"
MTP = "locks/qwen35-27b-h200-mtp.lock.toml"


def relock(root: Path, serving: str, lock: str) -> None:
    """``lock`` (inside ``root``) written anew by this code with ``lock --update``: its pricing model the running
    code's, so its pins give its record exactly."""
    result = invoke("lock", "--update", "-o", str(root / lock), "--force", root=root)
    assert result.exit_code == 0, result.output


def forge_pin(root: Path, rel: str, path: str, amount: float) -> None:
    """The pinned fact ``path`` of lock ``rel`` set to ``amount`` (its unit kept), the record kept, every digest
    recomputed (:func:`passprice.locks.lock_text` writes them)."""
    from passprice.locks import lock_text, read_lock

    target = root / rel
    lock = read_lock(target)
    was = lock.facts[path]
    facts = {**lock.facts, path: attrs.evolve(was, amount=amount, value=was.value / was.amount * amount)}
    target.write_text(lock_text(attrs.evolve(lock, facts=facts)), encoding="utf-8")


def forge_record(root: Path, rel: str, **fields: object) -> None:
    """The recorded price of lock ``rel`` with ``fields`` replaced, the pins kept, every digest recomputed."""
    from passprice.locks import lock_text, read_lock

    target = root / rel
    lock = read_lock(target)
    target.write_text(lock_text(attrs.evolve(lock, price={**lock.price, **fields})), encoding="utf-8")


# --- 1. a price resting on a forged lock is refused by every pricing command -----------------------------------------

FORGED = (
    "passprice: refused: LockForged: lock r1-qwen7b-h200 (locks/r1-qwen7b-h200.lock.toml) is forged: its own pinned "
    "inputs, priced with the code that wrote it, do not give the price it records (first: memory_s: recorded "
    "0.0010039186836974126, its pins give 0.0009637619363495162): it was edited by hand and its digests recomputed, "
    "so no price rests on it; restore the lock from the last commit that holds it as written, or re-lock it through "
    "review (`passprice lock --update -o locks/r1-qwen7b-h200.lock.toml --force`), or price without the lock "
    "(--no-lock)"
)


@pytest.fixture(scope="module")
def forged_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry whose r1-qwen7b-h200 lock pins memory.bandwidth 5 TB/s (the card's is 4.8) and records the price
    of 4.8 TB/s (996.1 tokens/s, memory_s 1.004 ms; 5 TB/s gives 1037.6 tokens/s, memory_s 963.8 µs), re-digested;
    and whose qwen35-27b-h200-mtp lock pins an H200 bandwidth of 5 TB/s the same way."""
    root = copy_root(tmp_path_factory.mktemp("slip53"))
    relock(root, "r1-qwen7b-h200", R1)
    relock(root, "qwen35-27b-h200-mtp", MTP)
    forge_pin(root, R1, "memory.bandwidth", 5.0)
    forge_pin(root, MTP, "memory.bandwidth", 5.0)
    return root


@pytest.mark.parametrize("args", [
    ("price", "r1-qwen7b-h200", "--lock", R1),
    ("price", "r1-qwen7b-h200"),  # under its locks, the forged one among them
    ("best", "r1-qwen7b-h200", "--lock", R1),
    ("max-batch", "r1-qwen7b-h200", "--lock", R1),
    ("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--lock", R1),
    ("sweep", "r1-qwen7b-h200", "--batches", "1,2", "--lock", R1),
    ("sweep", "r1-qwen7b-h200", "--batches", "1,2"),
    ("compare", "r1-qwen7b-h200", "--cards", "h200_sxm_141gb"),
    ("simulate", "r1-qwen7b-h200", "--synthetic", "5", "--lock", R1),
    ("audit", "r1-qwen7b-h200"),
    ("audit", R1),
])  # fmt: skip
def test_a_forged_lock_is_refused_by_every_pricing_command(forged_root: Path, args: tuple[str, ...]) -> None:
    """Before: ``price r1-qwen7b-h200 --lock L`` said "floors hold, and the price is the one r1-qwen7b-h200 records;
    drifted since the lock: memory.bandwidth: 5 TB/s (published) → 4.8 TB/s (published)", exit 0, and so did best,
    max-batch, sweep, simulate and audit (``audit L`` printed "to cite this price: the lock's name and digest" with a
    warning), while ``check`` and ``reproduce`` failed the lock (exit 1). Now each refuses it by name, exit 1."""
    import os

    cwd = Path.cwd()
    os.chdir(forged_root)  # the lock shown as the command line names it, relative to the registry
    try:
        result = invoke(*args, root=forged_root)
        assert result.exit_code == 1, result.output
        # compare takes no --no-lock: its refusal does not offer it
        said = FORGED.removesuffix(", or price without the lock (--no-lock)") if args[0] == "compare" else FORGED
        assert result.stderr.splitlines() == [said]
        out = refused(*args, root=forged_root, name="LockForged")
    finally:
        os.chdir(cwd)
    assert (out["lock"], out["first"]) == ("r1-qwen7b-h200", "memory_s")
    assert (out["recorded"], out["pinned"]) == (0.0010039186836974126, 0.0009637619363495162)


def test_speculate_refuses_a_forged_lock(forged_root: Path) -> None:
    """``speculate`` of the MTP serving under its lock forged to 5 TB/s: refused by name (before: exit 0)."""
    out = refused("speculate", "qwen35-27b-h200-mtp", root=forged_root, name="LockForged")
    assert out["lock"] == "qwen35-27b-h200-mtp" and out["first"] == "memory_s"


def test_without_the_lock_the_price_is_made(forged_root: Path) -> None:
    """``--no-lock`` is the way out the refusal names: the what-if prices, 996.1 tokens/s (H200, 4.8 TB/s)."""
    result = invoke("price", "r1-qwen7b-h200", "--no-lock", "--json", root=forged_root)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["tokens_per_s"] == pytest.approx(996.0966124437687, rel=1e-12)


def test_check_and_reproduce_fail_the_same_lock(forged_root: Path) -> None:
    """The same status ``check`` gives a lock that fails (exit 1), and ``reproduce``'s."""
    assert invoke("check", root=forged_root).exit_code == 1
    assert invoke("reproduce", str(forged_root / R1), root=forged_root).exit_code == 1


def test_a_forged_record_is_refused(tmp_path: Path) -> None:
    """The record edited instead of a pin (tokens/s 996.1 → 1,000, the pins kept): refused, first ``tokens_per_s``
    (before: "floors hold, but the price is NOT the one r1-qwen7b-h200 records", exit 0)."""
    root = copy_root(tmp_path)
    relock(root, "r1-qwen7b-h200", R1)
    forge_record(root, R1, tokens_per_s=1000.0)
    out = refused("price", "r1-qwen7b-h200", "--lock", str(root / R1), root=root, name="LockForged")
    assert (out["first"], out["recorded"], out["pinned"]) == ("tokens_per_s", 1000.0, 996.0966124437687)


def test_a_forged_provenance_claim_is_refused(tmp_path: Path) -> None:
    """The record's provenance edited to ``measured`` (the price is ``estimated``): slip round 50 said it was edited
    by hand and exited 0; now refused, first ``provenance``."""
    root = copy_root(tmp_path)
    relock(root, "r1-qwen7b-h200", R1)
    forge_record(root, R1, provenance="measured")
    out = refused("best", "r1-qwen7b-h200", "--lock", str(root / R1), root=root, name="LockForged")
    assert (out["first"], out["recorded"], out["pinned"]) == ("provenance", "measured", "estimated")


def test_a_lock_of_other_code_that_moved_is_no_forgery(tmp_path: Path) -> None:
    """A lock written by other code (its ``pricing_model`` another digest) whose pins do not give its record is no
    forgery the running code can tell from a code change: priced under as before, the drift said, exit 0
    (``reproduce`` names the code that moved it)."""
    from passprice.locks import LockInfo, lock_text, read_lock

    root = copy_root(tmp_path)
    relock(root, "r1-qwen7b-h200", R1)
    forge_pin(root, R1, "memory.bandwidth", 5.0)
    lock = read_lock(root / R1)
    info = attrs.evolve(lock.info, pricing_model=LISTED_MODEL)
    assert isinstance(info, LockInfo)
    (root / R1).write_text(lock_text(attrs.evolve(lock, info=info)), encoding="utf-8")
    result = invoke("price", "r1-qwen7b-h200", "--lock", str(root / R1), root=root)
    assert result.exit_code == 0, result.output
    assert "drifted since the lock: memory.bandwidth: 5 TB/s (published) → 4.8 TB/s (published)" in result.stdout


def test_a_lock_whose_digest_fails_is_bad_input_everywhere(tmp_path: Path) -> None:
    """A pinned value edited without re-digesting: the file does not read, exit 2 with the same line from ``price
    --lock`` and ``check`` (bad input, as every lock file that does not read)."""
    root = copy_root(tmp_path)
    text = (root / R1).read_text(encoding="utf-8")
    head, table, tail = text.partition('[facts."memory.bandwidth"]\n')
    assert table and "\nvalue = 4.8\n" in tail.split("\n[", 1)[0]
    (root / R1).write_text(head + table + tail.replace("\nvalue = 4.8\n", "\nvalue = 5.0\n", 1), encoding="utf-8")
    said = "digest mismatch: the pinned fact memory.bandwidth was edited by hand"
    priced = invoke("price", "r1-qwen7b-h200", "--lock", str(root / R1), root=root)
    assert priced.exit_code == 2 and said in priced.stderr
    checked = invoke("check", root=root)
    assert checked.exit_code == 2 and said in checked.stderr


# --- 2. a stack re-fit lists the facts that moved, not every fact it wrote again ------------------------------------

LMD_RUNS = "registry/measurements/lmdeploy-turbomind-a100.toml"
LMD = "facts/stacks/lmdeploy-turbomind-2312.toml"


def _repo(tmp_path: Path) -> Path:
    """A git repository of the checkout's registry, one commit."""
    from test_diff import commit_all, git

    root = copy_root(tmp_path)
    git(root, "init", "-q")
    commit_all(root, "base")
    return root


def _refit_moving_two(tmp_path: Path) -> Path:
    """The first LMDeploy run's tokens/s 100.02 → 100.028 and the stack re-fitted (``calibrate``), committed: at 4
    digits the fit moves overhead.pass 1716 → 1715 µs and share.read 0.9329 → 0.9328 only; its 5 other fitted facts
    (overhead.layer, share.append, share.float, share.vector, terms.serial) are written again with the same values,
    their derivations' runs and errors changed."""
    from test_diff import commit_all

    root = _repo(tmp_path)
    runs = root / LMD_RUNS
    text = runs.read_text(encoding="utf-8")
    assert text.count("tokens_per_s = 100.02\n") == 1
    runs.write_text(text.replace("tokens_per_s = 100.02\n", "tokens_per_s = 100.028\n"), encoding="utf-8")
    fitted = invoke("calibrate", "--stack", "lmdeploy-turbomind-2312", root=root)
    assert fitted.exit_code == 0, fitted.output
    commit_all(root, "refit")
    return root


def test_a_refit_lists_only_the_facts_that_moved(tmp_path: Path) -> None:
    """Before: "7 stack facts changed in 1 file", a row each ("share.append  1 → 1  (derivation changed)"). Now the
    2 that moved, old → new, and one line naming the 5 written again unmoved."""
    root = _refit_moving_two(tmp_path)
    status, (text, markdown, as_json) = renderings(root, "text", "markdown", "json", base="HEAD~1")  # one review
    assert status == 0, text
    lines = text.splitlines()
    assert lines[1].startswith("2 stack facts changed in 1 file (5 more re-derived to the same value); ")
    rows = [line for line in lines if line.startswith("  ") and "derivation changed)" in line]
    assert [row.split()[0:4] for row in rows] == [["overhead.pass", "1716", "µs", "→"], ["share.read", "0.9329", "→",
                                                                                     "0.9328"]]
    assert ("  5 more facts re-derived to the same value, provenance and citation (not listed as changed): "
            "overhead.layer, share.append, share.float, share.vector, terms.serial; derivation: as overhead.pass's"
            ) in lines
    assert markdown.count("| `stack lmdeploy-turbomind-2312` |") == 2
    assert "- `facts/stacks/lmdeploy-turbomind-2312.toml`: 5 more facts re-derived to the same value" in markdown
    document = json.loads(as_json)
    facts = [c for f in document["files"] if f["path"] == LMD for c in f["facts"]]
    assert [c["path"] for c in facts if not c["refit_unmoved"]] == ["overhead.pass", "share.read"]
    assert len([c for c in facts if c["refit_unmoved"]]) == 5


# --- 3. a measurement's [source] note rewritten: old → new ---------------------------------------------------------


def test_a_source_note_change_is_shown(tmp_path: Path) -> None:
    """Before: "registry/measurements/lmdeploy-turbomind-a100.toml (changed)" and nothing more. Now the note's old
    and new text from 20 characters before the first change, each cut at 60 characters with an ellipsis."""
    from test_diff import commit_all

    root = _repo(tmp_path)
    runs = root / LMD_RUNS
    text = runs.read_text(encoding="utf-8")
    old = 'note = "Every figure is the throughput(out tok/s)'
    assert text.count(old) == 1
    runs.write_text(text.replace(old, 'note = "Each figure is the output throughput(out tok/s)'), encoding="utf-8")
    commit_all(root, "renote")
    result = invoke("diff", "HEAD~1", "HEAD", root=root)
    assert result.exit_code == 0, result.output
    assert ("  registry/measurements/lmdeploy-turbomind-a100.toml (changed): [source] note: \"Every figure is the "
            "throughput(out tok/s) LMDeploy's profile\"… → \"Each figure is the output throughput(out tok/s) "
            "LMDeploy's p\"…") in result.stdout.splitlines()


def test_a_source_note_changed_late_is_shown_where_it_changed(tmp_path: Path) -> None:
    """A change near the end of the 700-character note: shown from 20 characters before it, ``…`` in front."""
    from test_diff import commit_all

    root = _repo(tmp_path)
    runs = root / LMD_RUNS
    text = runs.read_text(encoding="utf-8")
    old = "not SXM4 or PCIe (sources/lmdeploy-a100-fp16-benchmark.toml)."
    assert text.count(old) == 1
    runs.write_text(text.replace(old, "not SXM4 or PCIe; read as SXM4 (sources/lmdeploy-a100-fp16-benchmark.toml)."),
                    encoding="utf-8")
    commit_all(root, "renote")
    line = next(x for x in invoke("diff", "HEAD~1", "HEAD", root=root).stdout.splitlines() if "[source]" in x)
    assert line.endswith("[source] note: …\"G', not SXM4 or PCIe (sources/lmdeploy-a100-fp16-benchmark.t\"… → …\"G', "
                         "not SXM4 or PCIe; read as SXM4 (sources/lmdeploy-a100-fp\"…"), line


# --- 4. fact recompute keeps a measured fact measured, and says so ----------------------------------------------------


def test_recompute_keeps_a_measured_share_measured_and_says_why(tmp_path: Path) -> None:
    """The H200's bandwidth corrected 4.8 → 4.89 TB/s: its three stream shares, measured rates over it, are
    recomputed (streams.read 4.48 / 4.89 = 0.91616 → 0.9162) and stay ``measured`` (session 32's decision), and the
    output says so and why (before: nothing said of the provenance)."""
    root = copy_root(tmp_path)
    edited = invoke("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "4.89", "--unit", "TB/s",
                    "--provenance", "published", "--source", "nvidia-h200-datasheet", "--locator",
                    "Technical Specifications table, H200 SXM column: 'GPU Memory Bandwidth 4.8TB/s'", root=root)
    assert edited.exit_code == 0, edited.output
    assert round(4.48 / 4.89, 4) == 0.9162
    done = invoke("fact", "recompute", "h200_sxm_141gb", "--json", root=root)
    assert done.exit_code == 0, done.output
    document = json.loads(done.stdout)
    read = next(e for e in document["recomputed"] if e["path"] == "streams.read")
    assert (read["old"]["provenance"], read["new"]["provenance"], read["new"]["value"]) == ("measured", "measured",
                                                                                           0.9162)
    assert document["provenance_kept"].startswith(
        "provenance kept: streams.append, streams.read, streams.rewrite stay measured (a recompute moves the value its "
        "formula gives from today's inputs, not what the fact rests on")


# --- 5. edits that must move a lock or a review's verdict, and edits that must not ---------------------------------


@pytest.fixture(scope="module")
def locked_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository (branch ``main``, one commit) of the checkout's registry with its 9 locks written anew by
    this code (so nothing reads as re-locked by other code)."""
    from test_diff import commit_all, git

    root = copy_root(tmp_path_factory.mktemp("locked"))
    for lock in sorted((root / "locks").glob("*.lock.toml")):
        result = invoke("lock", "--update", "-o", str(lock), "--force", root=root)
        assert result.exit_code == 0, result.output
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "base")
    return root


def _edited(locked_repo: Path, tmp_path: Path, edits: dict[str, tuple[str, str]]) -> Path:
    """A copy of ``locked_repo`` (its history too) with each file's ``old`` text replaced by ``new`` (once; it
    must be there), left uncommitted: the work tree a review compares with ``main``."""
    import shutil

    root = tmp_path / "repo"
    shutil.copytree(locked_repo, root, symlinks=True)
    for rel, (old, new) in edits.items():
        text = (root / rel).read_text(encoding="utf-8")
        assert text.count(old) == 1, (rel, old)
        (root / rel).write_text(text.replace(old, new, 1), encoding="utf-8")
    return root


H200 = "facts/cards/h200_sxm_141gb.toml"
LLAMACPP = "facts/stacks/llamacpp-cuda-2405.toml"
ROUTING = "facts/routing/qwen3-30b-a3b-measured.toml"


def test_comment_and_whitespace_edits_move_no_lock(locked_repo: Path, tmp_path: Path) -> None:
    """Comments added and spaces widened in a card, a stack, a routing record and a lock-pinned fact's line: no fact
    changed, no lock affected, ``check --frozen`` holds (a lock pins what the facts say, not how the file is laid
    out)."""
    root = _edited(locked_repo, tmp_path, {
        H200: ("\nvalue = 4.8\n", "\n# the datasheet's figure\nvalue   =   4.8   # TB/s\n"),
        LLAMACPP: ("[overhead.layer]\nvalue = 96.63\n", "[overhead.layer]   # fitted\nvalue = 96.63\n\n\n"),
        ROUTING: ("[hot_share]\nvalue = 0.9\n", "[hot_share]\nvalue = 0.90\n"),
    })
    reviewed = invoke("diff", "main", root=root)
    assert reviewed.exit_code == 0, reviewed.output
    assert reviewed.stdout.splitlines()[1].startswith("no fact changed; no lock affected; 10 locks unaffected")
    assert invoke("check", "--frozen", root=root).exit_code == 0


#: The H200 array's sparsity input, after its sparse input (the other cards' tensor rates hold the same constant).
SPARSITY = ("3,958 TOPS' (with sparsity)\" }\nderivation.inputs.sparsity = { value = 2, unit = \"1\", constant = "
            "\"2:4 structured sparsity doubles the ")


def test_a_derivation_constant_reworded_moves_the_locks_pinning_it(locked_repo: Path, tmp_path: Path) -> None:
    """The H200's ``array`` derivation's sparsity constant reworded, its value kept: the fact's digest moved, so
    the 5 H200 locks pinning it are to re-pin and ``check --frozen`` fails them."""
    root = _edited(locked_repo, tmp_path, {
        H200: (f"{SPARSITY}dense rate\"", f"{SPARSITY}rate\""),
    })
    reviewed = invoke("diff", "main", root=root)
    assert reviewed.stdout.splitlines()[1].startswith(
        "1 fact changed in 1 file; 5 locks affected, 5 to re-pin (lock --update) for check --frozen; "), reviewed.output
    assert "  array  989.5 TMAC/s → 989.5 TMAC/s  (derivation changed)  derived" in reviewed.stdout.splitlines()
    assert invoke("check", "--frozen", root=root).exit_code == 1


def test_a_stack_overhead_edited_by_hand_fails_the_lock_under_it(locked_repo: Path, tmp_path: Path) -> None:
    """``overhead.layer`` 96.63 → 96.64 µs by hand: the lock made under the stack moved unreviewed (exit 1) and
    ``check --frozen`` fails it."""
    root = _edited(locked_repo, tmp_path, {LLAMACPP: ("[overhead.layer]\nvalue = 96.63\n",
                                                      "[overhead.layer]\nvalue = 96.64\n")})
    reviewed = invoke("diff", "main", root=root)
    assert reviewed.exit_code == 1, reviewed.output
    # use45: a fitted fact moved inside its 0.1 % re-fit tolerance with no run moved is also to verify (was it typed?)
    assert reviewed.stdout.splitlines()[1].startswith(
        "1 stack fact changed in 1 file, 1 to verify in its source; 1 lock affected, 1 price moved unreviewed; ")
    assert invoke("check", "--frozen", root=root).exit_code == 1


def test_a_source_url_changed_is_asked_of_the_locked_prices_on_it(locked_repo: Path, tmp_path: Path) -> None:
    """The H200 datasheet's URL replaced: no pin moves (a lock pins the source's id and locator), but the review
    asks it of the 5 locked prices resting on it."""
    root = _edited(locked_repo, tmp_path, {"sources/nvidia-h200-datasheet.toml": (
        'url = "https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446"',
        'url = "https://example.com/h200-datasheet.pdf"')})
    reviewed = invoke("diff", "main", root=root)
    assert reviewed.stdout.splitlines()[1].startswith(
        "no fact changed; 1 source record changed; 1 source whose document changed, to verify (under 5 locked "
        "prices); "), reviewed.output


def test_a_comment_added_to_a_serving_says_so(locked_repo: Path, tmp_path: Path) -> None:
    """A comment appended to a serving file: no lock affected, and the file's entry says nothing it says changed
    (before: "registry/servings/r1-qwen7b-h200.toml (serving r1-qwen7b-h200): changed" and nothing more)."""
    rel = "registry/servings/r1-qwen7b-h200.toml"
    text = (locked_repo / rel).read_text(encoding="utf-8")
    root = _edited(locked_repo, tmp_path, {rel: (text, text + "\n# a comment\n")})
    lines = invoke("diff", "main", root=root).stdout.splitlines()
    assert lines[1].startswith("no fact changed; 1 serving changed; no lock affected; 10 locks unaffected")
    at = lines.index("registry/servings/r1-qwen7b-h200.toml (serving r1-qwen7b-h200): changed")
    assert lines[at + 1] == "  comments or layout only: every field of the serving reads as before"


def test_a_lock_kept_unforged_in_the_cache_is_refused_once_forged(tmp_path: Path) -> None:
    # The verdict "its pins give its record" is kept under the lock's [lock] digest, so a warm price re-prices no
    # lock; a lock forged after the honest one was kept has another digest and is re-priced and refused.
    root = copy_root(tmp_path / "reg")
    relock(root, "r1-qwen7b-h200", R1)
    assert invoke("price", "r1-qwen7b-h200", root=root).exit_code == 0
    assert invoke("price", "r1-qwen7b-h200", root=root).exit_code == 0  # warm: the kept verdict
    forge_pin(root, R1, "memory.bandwidth", 5.0)
    result = invoke("price", "r1-qwen7b-h200", root=root)
    assert result.exit_code == 1, result.output
    assert "LockForged: lock r1-qwen7b-h200" in result.output

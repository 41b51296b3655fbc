"""Slip round 28: a pull-request author changing what a locked price rests on past the review, ``check`` and the
pre-commit hook (this checkout's registry, committed on ``main`` of a throwaway repository, changed on a branch and
reviewed as CI reviews it: ``passprice diff main HEAD``), and the review's known leftovers:

- (L1) a serving added (its file, with or without a lock) was shown as its path alone, and the summary counted a
  serving and its lock added together as "1 other file changed": the review now says what the serving prices (card,
  checkpoint, batch, contexts), HEAD's price of it and which lock locks it (or the command that would), and counts
  "1 serving added".
- (L2) the pull-request comment never gave the command re-locking a lock whose price moved (``passprice lock
  --update -o FILE``; only stderr did), nor the re-lock loosening a floor a fact fell below: each failing lock has
  its command below the locks table now.
- (L3) a lock file edited by hand (its digest no longer matching) was priced with BASE's lock on HEAD's inputs, and
  that price stood in the HEAD column beside "not judged": no HEAD price is shown now, and the row says why.
- (L4) a floor loosened in one of a serving's two locks, the other still flooring the fact, read as any loosened
  floor: the review now says which lock still floors it, so the serving is held to it as before.

Attempts (each passed the review before its fix):

- (1) a lock's pinned citation re-cited by hand beside a price-neutral edit of ``src/passprice``: the pin check was
  skipped for a HEAD priced by its own code ("re-locked", exit 0).
- (2) ``src/sitecustomize.py`` beside the code: ``PYTHONPATH`` at the work tree's ``src`` ran it before HEAD was
  priced; it wrote the card back as BASE had it ("re-pin", exit 0).
- (3) the sticky comment was posted after the pull request's own install and check ran, which could rewrite it; and
  (3b) it was the first comment holding the marker, whoever wrote it.
- (4) a lock of no registered serving rewritten onto another card or limit under the same file ("re-locked", ✅).
- (5) a card (or drafting method) renamed with a fact re-cited inside it: every fact removed and added, nothing to
  verify (✅).
- (6) a folder ``origin/main/`` (a copy of the pull request's registry) taken for CI's ``origin/$BASE_REF``, and
  (6b) a tag ``origin/main``: the pull request compared with itself ("no changes", exit 0).
- (7) test_lock_forgery's hand-loosened lock beside a price-neutral code edit ("re-locked, floors loosened", exit 0).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke
from passprice.modellist import UNRECORDED_SAYS
from test_diff import commit_all, git
from test_slip_34 import renderings  # one in-process review rendered per format

R1 = "r1-qwen7b-h200"
MTP = "qwen35-27b-h200-mtp"
H100 = "r1-qwen7b-h100"
CARD = "h200_sxm_141gb"
ENTRY = "deepseek-r1-distill-qwen-7b-q4_k_m"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository holding this checkout's registry (facts, registry, locks, sources, schema), committed on
    ``main``; each test works on a branch of its own made from it (:func:`branch`)."""
    path = tmp_path_factory.mktemp("slip28") / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    return path


def branch(path: Path, name: str) -> Path:
    """``path`` with a new branch ``name`` made from ``main`` checked out (its work tree clean)."""
    git(path, "checkout", "-q", "-f", "main")
    git(path, "clean", "-qfdx")
    git(path, "checkout", "-q", "-b", name)
    return path


def review(path: Path, fmt: str = "text") -> tuple[int, str, str]:
    """``passprice diff main HEAD --format FMT`` in ``path``: exit status, stdout, stderr."""
    result = invoke("diff", "main", "HEAD", "--format", fmt, root=path)
    return result.exit_code, result.stdout, result.stderr


def add_h100_serving(path: Path) -> None:
    """``registry/servings/r1-qwen7b-h100.toml``: the H200 serving of DeepSeek-R1-Distill-Qwen-7B moved to the H100."""
    text = (path / "registry" / "servings" / f"{R1}.toml").read_text(encoding="utf-8")
    moved = text.replace(f'card = "{CARD}"', 'card = "h100_sxm5_80gb"').replace("one H200 SXM", "one H100 SXM")
    assert moved != text
    (path / "registry" / "servings" / f"{H100}.toml").write_text(moved, encoding="utf-8")


# --- (L1) an added serving is described -------------------------------------------------------------------------------

SERVES = (f"card h100_sxm5_80gb, checkpoint {ENTRY}, batch 1, contexts 1 at position 2,048 of limit 4,096")


def test_an_added_serving_and_its_lock_are_described_and_counted(registry: Path) -> None:
    path = branch(registry, "l1-locked")
    add_h100_serving(path)
    locked = invoke("lock", H100, "-o", str(path / "locks" / f"{H100}.lock.toml"), root=path)
    assert locked.exit_code == 0, locked.output
    commit_all(path, "r1 on the H100, locked")
    price = json.loads(invoke("price", H100, "--json", root=path).stdout)
    tokens = f"{price['tokens_per_s']:,.1f}"
    assert price["batch"] == 1 and price["binds"] == "memory" and price["provenance"] == "estimated"
    status, (text, markdown, as_json) = renderings(path, "text", "markdown", "json")  # one review
    assert status == 0, text
    lines = text.splitlines()
    # was "no fact changed; 1 other file changed; 1 lock affected, 1 added": two files added, one counted, unnamed
    assert lines[1] == "no fact changed; 1 serving added; 1 lock affected, 1 added; 10 locks unaffected"
    at = lines.index(f"registry/servings/{H100}.toml (serving {H100}): added")
    assert lines[at + 1: at + 4] == [
        f"  serves    {SERVES}",
        f"  price     HEAD prices it {tokens} tokens/s at batch 1, binds on memory, weakest provenance estimated",
        f"  lock      locked by {H100}",
    ]
    assert status == 0
    assert (f"- `registry/servings/{H100}.toml` (added): {SERVES}; HEAD prices it {tokens} tokens/s at batch 1, "
            f"binds on memory, weakest provenance estimated; locked by `{H100}`") in markdown.splitlines()
    assert "other file" not in markdown
    # the price the review shows is the one the lock records
    lock_row = next(line for line in markdown.splitlines() if line.startswith(f"| `{H100}` |"))
    assert f"| {tokens} | – | {tokens} |" in lock_row
    out = json.loads(as_json)
    (added,) = out["added_servings"]
    assert added["serving"] == H100 and added["locks"] == [H100] and added["lock_command"] is None
    assert added["after"]["tokens_per_s"] == price["tokens_per_s"]


def test_an_added_serving_no_lock_pins_gives_the_command_that_locks_it(registry: Path) -> None:
    path = branch(registry, "l1-unlocked")
    add_h100_serving(path)
    commit_all(path, "r1 on the H100")
    status, markdown, _ = review(path, "markdown")
    assert status == 0, markdown
    assert markdown.splitlines()[0].endswith("no fact changed; 1 serving added; no lock affected; 10 locks unaffected")
    line = next(x for x in markdown.splitlines() if x.startswith(f"- `registry/servings/{H100}.toml` (added): "))
    assert line.endswith(
        f"; not locked (nothing pins its price, so no review judges it: `passprice lock {H100} -o "
        f"locks/{H100}.lock.toml` locks it)"
    )
    # the command does what it says
    assert invoke("lock", H100, "-o", str(path / "locks" / f"{H100}.lock.toml"), root=path).exit_code == 0


def test_an_added_serving_the_card_cannot_hold_says_so(registry: Path) -> None:
    """DeepSeek-V3 on the H100 (80 GB): HEAD refuses it, and the review says so rather than a price or a command."""
    path = branch(registry, "l1-refused")
    text = (path / "registry" / "servings" / "deepseek-v3-h200.toml").read_text(encoding="utf-8")
    (path / "registry" / "servings" / "deepseek-v3-h100.toml").write_text(
        text.replace(f'card = "{CARD}"', 'card = "h100_sxm5_80gb"'), encoding="utf-8")
    commit_all(path, "deepseek-v3 on the H100")
    status, text_out, _ = review(path)
    assert status == 0, text_out
    lines = text_out.splitlines()
    at = lines.index("registry/servings/deepseek-v3-h100.toml (serving deepseek-v3-h100): added")
    assert lines[at + 2].startswith("  price     HEAD refuses it: NotResident: the card memory must hold ")
    assert lines[at + 3] == "  lock      not locked"


def test_a_comment_lists_the_first_50_serving_files_and_counts_the_rest(registry: Path) -> None:
    """300 serving files added made a pull-request comment of 96 KB once each was described (GitHub takes 65,536
    characters; 44 KB of paths alone before): the comment lists 50, the text review each."""
    path = branch(registry, "l1-many")
    for i in range(60):
        (path / "registry" / "servings" / f"s{i:03d}.toml").write_text(
            f'checkpoint = "{ENTRY}"\ncard = "h100_sxm5_80gb"\n', encoding="utf-8")
    commit_all(path, "60 servings")
    status, (markdown, text_out) = renderings(path, "markdown", "text")  # one review
    assert status == 0, markdown
    lines = markdown.splitlines()
    listed = [line for line in lines if line.startswith("- `registry/servings/s")]
    assert len(listed) == 50 and listed[-1].startswith("- `registry/servings/s049.toml` (added): card h100_sxm5_80gb")
    assert "- and 10 more serving files: the text review (`passprice diff`) lists each" in lines
    assert markdown.splitlines()[0].endswith(
        "no fact changed; 60 servings added; no lock affected; 10 locks unaffected")
    text = text_out.splitlines()
    assert "registry/servings/s059.toml (serving s059): added" in text


# --- (L2) the comment gives the re-lock command -----------------------------------------------------------------------


def test_the_comment_gives_the_command_re_locking_a_moved_price(registry: Path) -> None:
    path = branch(registry, "l2-moved")
    edited = invoke("fact", "set", CARD, "streams.read", "--value", "0.95", "--unit", "1", "--provenance", "measured",
                    "--source", "azure-ai-benchmarking-guide", "--locator", "a what-if: a faster read", root=path)
    assert edited.exit_code == 0, edited.output
    commit_all(path, "h200: streams.read 0.95")
    status, markdown, stderr = review(path, "markdown")
    assert status == 1, markdown
    lines = markdown.splitlines()
    for name in (R1, f"{R1}-best"):
        assert f"| `{name}` |" in markdown and f"passprice lock --update -o locks/{name}.lock.toml" in stderr
        # was on stderr only
        assert (f"- `{name}`: the change moved its price and its file records the old one: once the move is "
                f"reviewed, re-lock it with `passprice lock --update -o locks/{name}.lock.toml`") in lines


def test_the_comment_gives_the_re_lock_loosening_a_broken_floor(registry: Path) -> None:
    """The README's walk-through: the H200's measured streams.rewrite replaced by an estimate breaks the hybrid's
    lock; the comment gives the command stderr gives."""
    path = branch(registry, "l2-broken")
    edited = invoke("fact", "set", CARD, "streams.rewrite", "--value", "0.8", "--unit", "1", "--provenance",
                    "estimated", "--source", "azure-ai-benchmarking-guide", "--locator", "an estimate", root=path)
    assert edited.exit_code == 0, edited.output
    commit_all(path, "h200: streams.rewrite 0.8, estimated")
    status, markdown, stderr = review(path, "markdown")
    assert status == 1
    command = f"passprice lock --update -o locks/{MTP}.lock.toml --force --require streams.rewrite=estimated"
    assert command in stderr
    assert (f"- `{MTP}`: restore the fact below its floor, or accept it by re-locking with that floor loosened (the "
            f"review then shows the loosened floor): `{command}`") in markdown.splitlines()
    # the command given is the one that makes the review pass
    words = command.split()[1:]
    words[words.index("-o") + 1] = str(path / words[words.index("-o") + 1])
    assert invoke(*words, root=path).exit_code == 0
    commit_all(path, "re-lock on the estimate")
    assert review(path)[0] == 0


# --- (L3) a hand-edited lock shows no HEAD price ----------------------------------------------------------------------


def test_a_lock_edited_by_hand_shows_no_head_price(registry: Path) -> None:
    path = branch(registry, "l3")
    lock = path / "locks" / f"{R1}.lock.toml"
    text = lock.read_text(encoding="utf-8")
    edited = text.replace("tokens_per_s = 996.0966124437687", "tokens_per_s = 1100.0")
    assert edited != text
    lock.write_text(edited, encoding="utf-8")
    commit_all(path, "r1: a better price")
    status, (markdown, as_json, text_out) = renderings(path, "markdown", "json", "text")  # one review
    assert status == 2
    row = next(line for line in markdown.splitlines() if line.startswith(f"| `{R1}` |"))
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    # was: 996.1 | 996.1 | +0 % | memory (BASE's lock priced on HEAD's inputs, beside "not judged")
    assert cells[2] == "held → not judged: HEAD's lock file does not read"
    assert cells[4:7] == ["996.1", "– (not judged: its lock file does not read)", "–"]
    lines = markdown.splitlines()
    assert (f"- `{R1}`: HEAD's lock file does not read, so there is no HEAD lock to price and judge: no HEAD price is "
            "shown (BASE's lock priced on HEAD's inputs is not this file's price)") in lines
    # walkthrough 41: the line goes on to say what the edit changed
    restore = [line for line in lines if line.startswith(
        f"- `{R1}`: restore its file as BASE has it (`git checkout BASE -- FILE`), then re-lock it with "
        f"`passprice lock --update -o locks/{R1}.lock.toml`; the edit changed ")]
    assert len(restore) == 1 and "price.tokens_per_s" in restore[0], lines
    out = json.loads(as_json)
    (entry,) = [x for x in out["locks"] if x["name"] == R1]
    assert entry["head_unread"] and entry["relative_change"] is None and "tokens_per_s" not in entry["after"]
    text_lines = text_out.splitlines()
    assert "    tokens/s  996.1 → – (not judged: HEAD's lock file does not read)" in text_lines


# --- (L4) a floor loosened that another lock of the serving keeps -----------------------------------------------------


def test_a_floor_loosened_that_the_other_lock_keeps_says_so(registry: Path) -> None:
    path = branch(registry, "l4")
    relocked = invoke("lock", "--update", "-o", str(path / "locks" / f"{R1}.lock.toml"), "--force", "--require",
                      "streams.read=estimated", root=path)
    assert relocked.exit_code == 0, relocked.output
    commit_all(path, "r1: streams.read floored at estimated")
    status, (markdown, as_json) = renderings(path, "markdown", "json")  # one review
    assert status == 0
    assert (f"- ℹ️ `{R1}`: floor on streams.read loosened: measured → estimated; lock {R1}-best of serving {R1} still "
            "floors streams.read at measured (its price rests on it): the serving is held to that floor as before, "
            "and a weaker fact still fails the review and check") in markdown.splitlines()
    row = next(line for line in markdown.splitlines() if line.startswith(f"| `{R1}` |"))
    assert row.endswith("| ⚠️ re-locked, floors loosened (another lock of the serving still holds each: below) |")
    out = json.loads(as_json)
    (entry,) = [x for x in out["locks"] if x["name"] == R1]
    assert entry["floors_kept"] == {"streams.read": {"lock": f"{R1}-best", "floor": "measured"}}
    # and it is so: an estimated streams.read still fails the review, on the other lock
    edited = invoke("fact", "set", CARD, "streams.read", "--value", "0.9333", "--unit", "1", "--provenance",
                    "estimated", "--source", "azure-ai-benchmarking-guide", "--locator", "an estimate", root=path)
    assert edited.exit_code == 0, edited.output
    commit_all(path, "h200: streams.read estimated")
    out = json.loads(invoke("diff", "main", "HEAD", "--json", root=path).stdout)
    assert out["exit_status"] == 1 and f"{R1}-best" in out["broken"] and R1 not in out["broken"]


def test_a_floor_loosened_in_every_lock_of_the_serving_is_kept_by_none(registry: Path) -> None:
    path = branch(registry, "l4-both")

    def loosen(name: str) -> None:
        relocked = invoke("lock", "--update", "-o", str(path / "locks" / f"{name}.lock.toml"), "--force", "--require",
                          "streams.read=estimated", root=path)
        assert relocked.exit_code == 0, relocked.output

    for name in (R1, f"{R1}-best"):
        loosen(name)
    commit_all(path, "r1: streams.read floored at estimated in both limit locks")
    out = json.loads(invoke("diff", "main", "HEAD", "--json", root=path).stdout)
    # the serving's third lock, made under llamacpp-cuda-2405 (stacklock 29), rests on streams.read too and keeps it
    kept = {"streams.read": {"lock": f"{R1}-llamacpp", "floor": "measured"}}
    assert {x["name"]: x["floors_kept"] for x in out["locks"]} == {R1: kept, f"{R1}-best": kept}
    loosen(f"{R1}-llamacpp")
    commit_all(path, "r1: streams.read floored at estimated in the stack lock too")
    _, (as_json, markdown) = renderings(path, "json", "markdown")  # one review
    out = json.loads(as_json)
    assert {x["name"]: x["floors_kept"] for x in out["locks"]} == {R1: {}, f"{R1}-best": {}, f"{R1}-llamacpp": {}}
    assert f"- ⚠️ `{R1}`: floor on streams.read loosened: measured → estimated" in markdown.splitlines()


# --- (1) a lock's pinned citation rewritten under a change to passprice's own code ------------------------------------


def test_a_lock_re_cited_by_hand_beside_a_code_change_fails_the_review(tmp_path: Path) -> None:
    """Slip 10's forged pin (the lock's memory.bandwidth re-cited to the Hopper whitepaper, digests recomputed) with a
    price-neutral change to ``src/passprice`` beside it: HEAD was priced by its own code, in its own process, and the
    review skipped its pin check there (a check with the running code), so it said "re-locked" (exit 0)."""
    from test_slip_10 import _base, _recite

    path = _base(tmp_path / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    module = path / "src" / "passprice" / "serving.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n\n#: read by nothing\nUNREAD_CONSTANT = 1\n",
                      encoding="utf-8")
    _recite(path / "locks" / f"{R1}.lock.toml")
    commit_all(path, "tidy serving.py; re-cite the lock")
    result = invoke("diff", "main", "HEAD", "--json", root=path)
    out = json.loads(result.stdout)
    assert out["pricing_model"]["changed"] and out["code_changed"] == ["src/passprice/serving.py"]
    assert result.exit_code == 1, result.output  # was 0: "1 re-locked; pricing model changed"
    line, unrecorded = out["head_check"]  # slip 58: its digest, recomputed by hand, is in no record of the list
    assert unrecorded.startswith(f"locks/{R1}.lock.toml: lock.digest: ") and UNRECORDED_SAYS in unrecorded
    assert line.startswith(f"locks/{R1}.lock.toml: facts.memory.bandwidth: pins 4.8 TB/s (published) cited "
                           "nvidia-hopper-whitepaper: Table 3, H100 SXM5 column: memory bandwidth 4.8 TB/s, a fact no "
                           "side of the change holds")
    # the code change alone (the lock as BASE has it) still passes: every locked price re-priced the same
    git(path, "checkout", "-q", "main", "--", f"locks/{R1}.lock.toml")
    commit_all(path, "the lock as it was")
    assert invoke("diff", "main", "HEAD", root=path).exit_code == 0


# --- (2) a sitecustomize.py beside src/passprice, run by the review of a work tree ------------------------------------


def test_a_sitecustomize_beside_the_code_does_not_run_in_the_review(tmp_path: Path) -> None:
    """The H200's streams.read raised (996.1 → 1,013.4 tokens/s for the lock), a constant added to serving.py (so
    HEAD is priced by its own code, in its own process) and ``src/sitecustomize.py`` that writes the card back as
    BASE has it: ``site`` imported it from ``PYTHONPATH`` (the work tree's ``src``) before HEAD was priced, so the
    review of the work tree (as CI runs it: ``diff origin/BASE``) said the lock only needed re-pinning (exit 0), its
    code section named serving.py alone, and ``check`` afterwards read BASE's figure in the checkout."""
    from test_slip_10 import _base

    path = _base(tmp_path / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    card = path / "facts" / "cards" / f"{CARD}.toml"
    before = card.read_text(encoding="utf-8")
    edited = invoke("fact", "set", CARD, "streams.read", "--value", "0.95", "--unit", "1", "--provenance", "measured",
                    "--source", "azure-ai-benchmarking-guide", "--locator", "a what-if", root=path)
    assert edited.exit_code == 0, edited.output
    after = card.read_text(encoding="utf-8")
    module = path / "src" / "passprice" / "serving.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n\n#: read by nothing\nUNREAD_CONSTANT = 1\n",
                      encoding="utf-8")
    (path / "src" / "sitecustomize.py").write_text(
        "import pathlib\n"
        "card = pathlib.Path.cwd() / 'facts' / 'cards' / 'h200_sxm_141gb.toml'\n"
        f"if card.is_file() and card.read_text(encoding='utf-8') == {after!r}:\n"
        f"    card.write_text({before!r}, encoding='utf-8')\n", encoding="utf-8")
    (path / "json.py").write_text("raise SystemExit('the checkout top json.py was imported')\n", encoding="utf-8")
    commit_all(path, "h200: streams.read 0.95; tidy serving.py")
    result = invoke("diff", "main", "--json", root=path)  # HEAD: the work tree
    assert card.read_text(encoding="utf-8") == after  # was: BASE's card again
    out = json.loads(result.stdout)
    assert out["pricing_model"]["priced_with"][1].endswith("in its own process")
    assert result.exit_code == 1, result.output  # was 0: "1 to re-pin", 996.1 → 996.1
    (lock,) = out["locks"]
    assert lock["name"] == R1 and lock["stale"] == "memory_s"
    assert f"{lock['after']['tokens_per_s']:,.1f}" == "1,013.4"
    assert out["stale"] == [R1]


# --- (3) the sticky comment posted after the pull request's own code ran ----------------------------------------------


def test_the_sticky_comment_is_posted_before_any_of_the_pull_request_s_code_runs() -> None:
    """The workflow installed the pull request's passprice (``pip install .``: its build hook, ``hatch_build.py``, is
    the pull request's, and no review names it) and ran its ``passprice check`` before it posted the comment from
    ``$RUNNER_TEMP/passprice-diff.md``: either could rewrite that file, and the comment reviewers read showed ✅ for
    a review that asked to verify a re-cited fact (exit 0: the verdict step passes). The comment is posted first now;
    only the review's exit status (a step output, out of a later step's reach) and check come after."""
    from passprice.scaffold import workflow

    for text in ((REPO / ".github" / "workflows" / "facts.yml").read_text(encoding="utf-8"),
                 workflow("python -m pip install -r requirements.txt")):
        review = text.index('"$RUNNER_TEMP/reviewer/bin/passprice" diff "refs/remotes/origin/$BASE_REF"')
        comment = text.index("- name: passprice diff (sticky pull-request comment)")
        body = text.index('-F "body=@$RUNNER_TEMP/passprice-diff.md"')
        own = text.index("- name: Install passprice\n")
        check = text.index("run: passprice check")
        verdict = text.index("- name: passprice diff (verdict)")
        assert review < comment < body < own < check < verdict


# --- (4) a lock of no registered serving rewritten onto another card --------------------------------------------------


def _custom_locks(path: Path, name: str) -> None:
    """On a branch ``name`` of ``main``: ``r1-custom`` (DeepSeek-R1-Distill-Qwen-7B on the H200, no registered
    serving) and ``r1-1k`` (the registered serving at limit 1,024: a lock of no registered serving), committed."""
    branch(path, name)
    for args in (["--checkpoint", ENTRY, "--card", CARD, "--name", "r1-custom", "-o",
                  str(path / "locks" / "r1-custom.lock.toml")],
                 [R1, "--limit", "1024", "-o", str(path / "locks" / "r1-1k.lock.toml")]):
        locked = invoke("lock", *args, root=path)
        assert locked.exit_code == 0 and "locks no registered serving" in locked.stdout, locked.output
    commit_all(path, "two locks of no registered serving")


def test_a_lock_of_no_registered_serving_rewritten_to_another_serving_asks_another_question(registry: Path) -> None:
    path = registry
    _custom_locks(path, "custom-a")
    git(path, "checkout", "-q", "-b", "q-rewrite")
    for args in (["--checkpoint", ENTRY, "--card", "h100_sxm5_80gb", "--name", "r1-custom", "-o",
                  str(path / "locks" / "r1-custom.lock.toml"), "--force"],
                 [R1, "--limit", "4096", "-o", str(path / "locks" / "r1-1k.lock.toml"), "--force"]):
        assert invoke("lock", *args, root=path).exit_code == 0
    commit_all(path, "the same locks on the H100 and at 4K")
    result = invoke("diff", "custom-a", "HEAD", "--json", root=path)
    assert result.exit_code == 1, result.output  # was 0: ✅ "2 re-locked", -29 % and -2.1 %
    out = json.loads(result.stdout)
    assert sorted(out["requestioned"]) == ["r1-1k", "r1-custom"]
    questions = {x["name"]: x["question"] for x in out["locks"]}
    assert questions["r1-custom"] == ["serving card: h200_sxm_141gb → h100_sxm5_80gb"]
    assert questions["r1-1k"] == ["serving contexts: share 1.0, position 512.0, limit 1024 → share 1.0, position "
                                  "2048.0, limit 4096"]
    assert "2 asking another question" in out["summary"]


def test_a_lock_of_no_registered_serving_re_locked_with_update_asks_the_same(registry: Path) -> None:
    path = registry
    _custom_locks(path, "custom-b")
    git(path, "checkout", "-q", "-b", "q-update")
    edited = invoke("fact", "set", CARD, "streams.read", "--value", "0.95", "--unit", "1", "--provenance", "measured",
                    "--source", "azure-ai-benchmarking-guide", "--locator", "a what-if: a faster read", root=path)
    assert edited.exit_code == 0, edited.output
    for name in ("r1-custom", "r1-1k"):
        assert invoke("lock", "--update", "-o", str(path / "locks" / f"{name}.lock.toml"), root=path).exit_code == 0
    commit_all(path, "streams.read 0.95; the two locks re-locked")
    out = json.loads(invoke("diff", "custom-b", "HEAD", "--json", root=path).stdout)
    assert out["requestioned"] == []
    reviews = {x["name"]: x["review"] for x in out["locks"]}
    assert reviews["r1-custom"] == reviews["r1-1k"] == "re-locked"


# --- (5) a card renamed with a fact re-cited inside it ----------------------------------------------------------------

H100_CARD = "h100_sxm5_80gb"
AZURE_READ = ('source = "azure-ai-benchmarking-guide"\nlocator = "Azure_Results/ND_H100_v5_results.md (NVIDIA H100 '
              '80GB HBM3, CUDA 12.6), HBM Bandwidth table (BabelStream): row \'| Dot   | 3.18              |\' '
              'in TB/s"')
HOPPER_READ = 'source = "nvidia-hopper-whitepaper"\nlocator = "Table 3, H100 SXM5 column: memory bandwidth, read share"'


def _rename_h100(path: Path, recite: bool) -> None:
    """``git mv`` the H100 SXM card to ``h100_sxm5.toml``, point its two servings at it (re-citing its measured
    streams.read to the Hopper whitepaper, same value, when ``recite``), re-lock their locks and commit."""
    git(path, "mv", f"facts/cards/{H100_CARD}.toml", "facts/cards/h100_sxm5.toml")
    card = path / "facts" / "cards" / "h100_sxm5.toml"
    if recite:
        text = card.read_text(encoding="utf-8")
        assert text.count(AZURE_READ) == 1
        card.write_text(text.replace(AZURE_READ, HOPPER_READ), encoding="utf-8")
    for name in ("gemma3-270m-h100", "gpt-oss-120b-h100", "qwen35-27b-h100-every8"):
        serving = path / "registry" / "servings" / f"{name}.toml"
        text = serving.read_text(encoding="utf-8")
        serving.write_text(text.replace(f'card = "{H100_CARD}"', 'card = "h100_sxm5"'), encoding="utf-8")
        assert invoke("lock", "--update", "-o", str(path / "locks" / f"{name}.lock.toml"), root=path).exit_code == 0
    commit_all(path, "the H100 SXM card renamed")


def test_a_card_renamed_with_a_fact_re_cited_inside_asks_to_verify_it(registry: Path) -> None:
    """The re-citation of a measured share two locked prices rest on was listed as one of 34 facts removed and added
    (✅, nothing to verify, exit 0); without the rename the same edit asks to verify the new citation (⚠️)."""
    path = branch(registry, "rename-recite")
    _rename_h100(path, recite=True)
    status, (markdown, as_json) = renderings(path, "markdown", "json")  # one review
    # its derivation's Dot quote, now read as the whitepaper's (its inputs cite the fact's source), is in no stored
    # text of it: NOT FOUND, which fails the review (tests/test_walk138.py)
    assert status == 1
    lines = markdown.splitlines()
    # was "✅ … 34 facts changed in 2 files; 2 servings changed; 2 locks affected, 2 re-locked"
    assert lines[0].startswith("❌ **passprice diff**")
    assert lines[0].endswith("1 fact changed in 1 file, 1 to verify in its source; 1 quote NOT FOUND in its stored "
                             "text; 1 card renamed; 3 servings changed; 3 locks affected, 3 re-locked; 7 locks "
                             "unaffected")
    assert ("| `h100_sxm5` | `streams.read` | 0.9493 | 0.9493 | citation changed | measured | changed, below |"
            in lines)
    assert (f"- `facts/cards/{H100_CARD}.toml` → `facts/cards/h100_sxm5.toml`: its facts compared with the old file's "
            "(1 fact changed)") in lines
    out = json.loads(as_json)
    assert out["to_verify"] == ["h100_sxm5:streams.read"]
    assert {x["name"]: x["changed"] for x in out["locks"]} == {
        "gemma3-270m-h100": ["streams.read"], "gpt-oss-120b-h100": ["streams.read"],
        "qwen35-27b-h100-every8": ["streams.read"]}
    files = {f["path"]: f for f in out["files"]}
    assert files["facts/cards/h100_sxm5.toml"]["renamed"] == f"facts/cards/{H100_CARD}.toml"
    assert files[f"facts/cards/{H100_CARD}.toml"]["facts"] == []


def test_a_card_only_renamed_says_so_and_no_fact_changed(registry: Path) -> None:
    path = branch(registry, "rename-only")
    _rename_h100(path, recite=False)
    status, text, _ = review(path)
    assert status == 0, text
    lines = text.splitlines()
    assert lines[1] == ("no fact changed; 1 card renamed; 3 servings changed; 3 locks affected, 3 re-locked; 7 locks "
                        "unaffected")
    assert (f"facts/cards/h100_sxm5.toml (card h100_sxm5): added (renamed from facts/cards/{H100_CARD}.toml: its facts "
            "compared with that file's)") in lines


def test_a_drafting_method_renamed_is_compared_with_its_old_file(registry: Path) -> None:
    """The same pairing for a drafting method its serving moves to: its acceptance figure moved in the rename is one
    fact changed (0.85 → 0.9), not three removed and three added."""
    path = branch(registry, "rename-draft")
    git(path, "mv", "facts/drafts/deepseek-v3-mtp.toml", "facts/drafts/deepseek-v3-mtp1.toml")
    draft = path / "facts" / "drafts" / "deepseek-v3-mtp1.toml"
    text = draft.read_text(encoding="utf-8")
    assert text.count("[acceptance.1]\nvalue = 0.85\n") == 1
    draft.write_text(text.replace("[acceptance.1]\nvalue = 0.85\n", "[acceptance.1]\nvalue = 0.9\n"), encoding="utf-8")
    serving = path / "registry" / "servings" / "deepseek-v3-h200.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace('method = "deepseek-v3-mtp"',
                                                                   'method = "deepseek-v3-mtp1"'), encoding="utf-8")
    commit_all(path, "the DeepSeek-V3 MTP method renamed, its acceptance raised")
    out = json.loads(invoke("diff", "main", "HEAD", "--json", root=path).stdout)
    assert out["summary"] == ("1 drafting-method fact changed in 1 file, 1 to verify in its source; 1 drafting "
                              "method renamed; 1 serving changed; no lock affected; 10 locks unaffected")
    assert out["to_verify"] == ["deepseek-v3-mtp1:acceptance.1"]
    (changed,) = [f for f in out["files"] if f["facts"]]
    assert changed["renamed"] == "facts/drafts/deepseek-v3-mtp.toml"
    (fact,) = changed["facts"]
    assert (fact["path"], fact["change"], fact["relative_change"]) == ("acceptance.1", "changed",
                                                                        pytest.approx(0.9 / 0.85 - 1))


# --- (6) a folder named like CI's base revision -----------------------------------------------------------------------


def raised(path: Path, name: str) -> Path:
    """``path`` with a new branch ``name`` made from the branch ``raised`` (made once for the module: the H200's
    streams.read raised to 0.95 and the five locks resting on it re-locked, committed on a branch of ``main``) checked
    out; the two tests starting from it each made it afresh (a fact set and five re-locks; session 39)."""
    done = subprocess.run(["git", "rev-parse", "--verify", "-q", "refs/heads/raised"], cwd=path, capture_output=True,
                          check=False)
    if done.returncode != 0:
        branch(path, "raised")
        edited = invoke("fact", "set", CARD, "streams.read", "--value", "0.95", "--unit", "1", "--provenance",
                        "measured", "--source", "azure-ai-benchmarking-guide", "--locator", "a what-if: a faster read",
                        root=path)
        assert edited.exit_code == 0, edited.output
        for lock in ("qwen3-30b-a3b-h200", MTP, f"{R1}-best", f"{R1}-llamacpp", R1):
            assert invoke("lock", "--update", "-o", str(path / "locks" / f"{lock}.lock.toml"), root=path).exit_code == 0
        commit_all(path, "streams.read 0.95, re-locked")
    git(path, "checkout", "-q", "-f", "raised")
    git(path, "clean", "-qfdx")
    git(path, "checkout", "-q", "-b", name)
    return path



def test_a_folder_named_origin_main_is_not_taken_for_the_base(registry: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CI reviews ``passprice diff origin/$BASE_REF`` in the checkout. A name with a slash was taken for a folder
    whenever one was there, so a pull request adding ``origin/main/`` (a copy of its own registry) was compared with
    itself: a raised streams.read, its four locks re-locked at the moved prices, read "no changes" (✅, exit 0)."""
    path = raised(registry, "origin-folder")
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(path / folder, path / "origin" / "main" / folder)
    commit_all(path, "and a folder origin/main")
    git(path, "update-ref", "refs/remotes/origin/main", "main")
    monkeypatch.chdir(path)
    result = invoke("diff", "origin/main", "--format", "comment", root=path)
    assert result.exit_code == 2, result.output  # was 0: "✅ … `origin/main` → `work tree`: no changes …"
    main = git(path, "rev-parse", "main")[:12]
    assert result.stderr == (f"passprice: error: origin/main: names both a folder here and the revision {main} of the "
                             "git checkout; write ./origin/main for the folder, or refs/remotes/origin/main (or the "
                             "commit id) for the revision\n")
    revision = invoke("diff", "refs/remotes/origin/main", root=path)
    assert revision.stdout.splitlines()[1].startswith("1 fact changed in 1 file, 1 to verify in its source; ")
    assert "5 re-locked" in revision.stdout.splitlines()[1]
    folder = invoke("diff", "./origin/main", root=path)  # the folder, written as one: compared, as asked
    assert folder.exit_code == 0 and folder.stdout.splitlines()[0] == "passprice diff: ./origin/main → work tree"


def test_a_tag_named_like_the_base_branch_is_refused(registry: Path) -> None:
    """A tag ``origin/main`` pushed beside the pull request (CI's checkout, ``fetch-depth: 0``, fetches every tag)
    is what git reads ``origin/main`` as, before ``refs/remotes/origin/main``: the raised streams.read and its
    re-locked locks read "no changes" (exit 0). And a tag ``main`` was the default BASE's branch."""
    path = raised(registry, "origin-tag")
    git(path, "update-ref", "refs/remotes/origin/main", "main")
    git(path, "tag", "origin/main", "HEAD")
    try:
        result = invoke("diff", "origin/main", root=path)
        assert result.exit_code == 2, result.output  # was 0: "no changes to facts, registry, locks …"
        assert result.stderr == (
            f"passprice: error: origin/main: names more than one ref of the git checkout at {path} "
            "(refs/remotes/origin/main, refs/tags/origin/main), and git takes one of them without a word: give the "
            "one meant in full, or the commit id\n")
        full = invoke("diff", "refs/remotes/origin/main", root=path)
        assert full.exit_code == 0 and "5 re-locked" in full.stdout.splitlines()[1]
        git(path, "tag", "main", "HEAD")
        assert "main: names more than one ref" in invoke("diff", root=path).stderr  # the default BASE
    finally:
        for tag in ("origin/main", "main"):  # the module's repository is shared by the tests after this one
            subprocess.run(["git", "tag", "-d", tag], cwd=path, capture_output=True, check=False)


def test_the_workflow_names_the_base_branch_in_full() -> None:
    """With ``fetch-depth: 0`` every tag is fetched: the workflow's ``origin/$BASE_REF`` was a tag ``origin/main``
    where one was pushed, for the reviewer's install (``git worktree add``, which only warns) as for the review."""
    from passprice.scaffold import workflow

    for text in ((REPO / ".github" / "workflows" / "facts.yml").read_text(encoding="utf-8"),
                 workflow("python -m pip install -r requirements.txt")):
        assert text.count('"refs/remotes/origin/$BASE_REF"') == 2
        assert '"origin/$BASE_REF"' not in text


def test_the_sticky_comment_is_the_workflow_s_own() -> None:
    """The comment updated was the first holding the marker, whoever wrote it: an author's comment opening with the
    marker took the review, and its author could edit it back to anything."""
    from passprice.scaffold import workflow

    for text in ((REPO / ".github" / "workflows" / "facts.yml").read_text(encoding="utf-8"),
                 workflow("python -m pip install -r requirements.txt")):
        assert ('select(.user.login == \\"github-actions[bot]\\" and (.body | startswith(\\"$marker\\")))'
                in text)


# --- (7) a lock loosened by hand beside a change to passprice's own code ----------------------------------------------


def test_a_lock_loosened_by_hand_beside_a_code_change_is_not_re_locked(tmp_path: Path) -> None:
    """test_lock_forgery's lock (floor and recorded rests_on of streams.read loosened to assumed by hand, its digest
    recomputed, the card's streams.read weakened to assumed) with a price-neutral edit of ``src/passprice`` beside
    it: HEAD priced by its own code, the review did not reproduce the lock from its pins and said "re-locked, floors
    loosened" (exit 0). Its recorded rests_on says assumed where it pins measured: no pricing model decides that."""
    from test_diff import edit_fact, read_fact
    from test_lock_forgery import _forge
    from test_slip_10 import _base

    path = _base(tmp_path / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    module = path / "src" / "passprice" / "serving.py"
    module.write_text(module.read_text(encoding="utf-8") + "\n\n#: read by nothing\nUNREAD_CONSTANT = 1\n",
                      encoding="utf-8")
    read = read_fact(path, "streams.read")
    edit_fact(path, "streams.read", value=read.value, unit="1", provenance="assumed", source=read.source,
              locator=read.locator, derivation=None)
    _forge(path / "locks" / f"{R1}.lock.toml")
    commit_all(path, "weaken streams.read; loosen the lock by hand; tidy serving.py")
    status, (as_json, markdown) = renderings(path, "json", "markdown")  # one review
    assert status == 1, as_json  # was 0: "1 re-locked, 1 with floors loosened"
    out = json.loads(as_json)
    assert out["pricing_model"]["priced_with"][1].endswith("in its own process")
    *lines, unrecorded = out["head_check"]
    assert UNRECORDED_SAYS in unrecorded  # slip 58: its digest, recomputed by hand, is in no record of the list
    assert lines == [
        f"locks/{R1}.lock.toml: does NOT reproduce from its own pinned inputs: its price records streams.read as "
        "assumed, and the lock pins streams.read measured: the lock was edited by hand (its digest recomputed); "
        f"restore it, then re-lock it: passprice lock --update -o locks/{R1}.lock.toml"
    ]
    assert [x["name"] for x in out["locks"]] == [R1]
    row = next(line for line in markdown.splitlines() if line.startswith(f"| `{R1}` |"))
    assert row.endswith("| ❌ does NOT reproduce from its own pinned inputs (edited by hand?): see HEAD fails "
                        "passprice check |")


def test_the_checkout_leaves_no_token_for_the_pull_request_s_code() -> None:
    """``actions/checkout`` keeps the job's token in ``.git/config`` unless told not to, and the pull request's code
    runs after the comment is posted (its install, its check; HEAD's own pricing code during the review): with the
    token it could rewrite the posted comment. Nothing after the checkout fetches, so none is kept."""
    from passprice.scaffold import workflow

    for text in ((REPO / ".github" / "workflows" / "facts.yml").read_text(encoding="utf-8"),
                 workflow("python -m pip install -r requirements.txt")):
        checkout = text.index("- uses: actions/checkout@")
        assert text.index("persist-credentials: false", checkout) < text.index("- uses: actions/setup-python@")
        assert "git fetch" not in text and "git pull" not in text

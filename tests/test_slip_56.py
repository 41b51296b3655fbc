"""Slip round 56 (issue 13): pull requests that slipped past the list of pricing models (slip 55's guard). The
list (``src/passprice/pricing_models.json``) is a fact about history the running package believes, so the review
names every entry a pull request adds, removes or edits, and fails each but the re-lock's own. Each test builds its
pull request in a scratch git repository and asserts the exit status and the words said."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.modellist import UNRECORDED_SAYS
from test_diff import commit_all, git
from test_slip_53 import R1, forge_record
from test_slip_55 import _with_model

LISTED = "src/passprice/pricing_models.json"
FORGED = "sha256:" + "1" * 64


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository (branch ``main``, one commit) of the checkout's registry, two of its locks (the running
    code's pricing model: r1-qwen7b-h200, qwen3-30b-a3b-h200; fewer locks, fewer prices a review makes), no stacks
    or measured runs, and its ``src/passprice`` with the list."""
    root = copy_root(tmp_path_factory.mktemp("slip56"))
    for lock in (root / "locks").glob("*.lock.toml"):
        if lock.name not in ("r1-qwen7b-h200.lock.toml", "qwen3-30b-a3b-h200.lock.toml"):
            lock.unlink()
    for folder in ("facts/stacks", "registry/measurements"):  # no lock left rests on them: no stack re-fit to review
        shutil.rmtree(root / folder)
        (root / folder).mkdir()
    (root / "sources" / "passprice-stack-calibration.toml").unlink()
    shutil.copytree(REPO / "src" / "passprice", root / "src" / "passprice",
                    ignore=shutil.ignore_patterns("__pycache__"))
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "base")
    return root


def _pull_request(base_repo: Path, tmp_path: Path) -> tuple[Path, dict[str, object]]:
    """A copy of ``base_repo`` (its history too) and its list, to edit."""
    root = tmp_path / "repo"
    shutil.copytree(base_repo, root, symlinks=True)
    return root, json.loads((root / LISTED).read_text(encoding="utf-8"))


def _write(root: Path, doc: dict[str, object]) -> None:
    (root / LISTED).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def test_removing_the_entry_base_locks_pin_fails_naming_them(base_repo: Path, tmp_path: Path) -> None:
    """Before: "no changes to facts, registry, locks or the pricing model; 9 locks unaffected", exit 0 (the
    checkout's 9 locks) — and once merged, every lock pinning that code reads as forged (LockModelForged). Now it
    fails, naming the locks."""
    root, doc = _pull_request(base_repo, tmp_path)
    pinned = tomllib.loads((root / R1).read_text(encoding="utf-8"))["lock"]["pricing_model"]
    doc["models"] = [m for m in doc["models"] if m["digest"] != pinned]  # type: ignore[attr-defined]
    _write(root, doc)
    result = invoke("diff", "main", "--format", "json", root=root)
    assert result.exit_code == 1, result.output
    out = json.loads(result.stdout)
    assert len(out["code_changed"]) == 1
    said = out["code_changed"][0]
    assert said.startswith(f"{LISTED}: entry {pinned[7:19]}… removed (passprice 0.1.0's, first locked ")
    assert said.endswith("; 2 BASE locks pin it (qwen3-30b-a3b-h200, r1-qwen7b-h200): the list records what "
                         "passprice locked this repository with, and an entry leaves it never; restore it")


def test_a_forged_digest_added_to_the_list_beside_a_lock_pinning_it_is_named_and_fails(
        base_repo: Path, tmp_path: Path) -> None:
    """Before: the review failed the forged lock but never named the list's added entry (HEAD's passprice, once
    merged, would take ``sha256:111…`` for code passprice had). Now the entry is named with the code's files and
    fails the review."""
    root, doc = _pull_request(base_repo, tmp_path)
    doc["models"].append({"digest": FORGED, "version": "0.1.0", "first_locked": "2026-12-04",  # type: ignore[attr-defined]
                          "commit": "abcdefabcdef"})
    _write(root, doc)
    forge_record(root, R1, tokens_per_s=1000.0)
    _with_model(root, R1, FORGED)
    result = invoke("diff", "main", root=root)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[1].endswith("; passprice's own code changed (1 file)")
    line = next(x for x in lines if x.startswith(f"  {LISTED}: entry 111111111111… added"))
    assert line.startswith(
        f"  {LISTED}: entry 111111111111… added (passprice 0.1.0's, first locked 2026-12-04 at commit abcdefabcdef): "
        "the digest of no code of this review (HEAD's is ")
    assert line.endswith("only a re-lock adds to the list, and only the code it locked with (passprice lock adds "
                         "it); remove the entry")
    assert lines.count(line) == 2  # named with the code, and among what fails


def test_each_change_to_the_list_is_judged() -> None:
    """Edited and removed entries fail; an added one passes only when it is HEAD's own code's (a re-lock's)."""
    from passprice.modelhistory import KnownModel
    from passprice.modellist import list_changes

    a = KnownModel("sha256:" + "a" * 64, "0.1.0", "2026-12-01", "c23cf4390948")
    own = KnownModel("sha256:" + "b" * 64, "0.1.0", "2026-12-05", "")
    base = {a.digest: a}
    relock = list_changes(base, {a.digest: a, own.digest: own}, own.digest)
    assert relock.failing == () and relock.named == (
        f"{LISTED}: entry bbbbbbbbbbbb… added (passprice 0.1.0's, first locked 2026-12-05): HEAD's own pricing model, "
        "a re-lock's",)
    edited = list_changes(base, {a.digest: KnownModel(a.digest, "0.1.0", "2026-11-01", a.commit)}, own.digest)
    assert edited.failing == (
        f"{LISTED}: entry aaaaaaaaaaaa… edited (passprice 0.1.0's, first locked 2026-12-01 at commit c23cf4390948 → "
        "passprice 0.1.0's, first locked 2026-11-01 at commit c23cf4390948): an entry records when passprice first "
        "locked with that code and is never rewritten; restore it",)
    assert list_changes(base, None, own.digest).failing == (
        f"{LISTED}: removed: the list of every pricing model passprice locked this repository with goes with the "
        "code that reads it; restore it",)
    assert list_changes(base, "x: not JSON", own.digest).failing == (f"{LISTED}: does not read on HEAD (x: not JSON)",)
    assert list_changes(base, dict(base), own.digest) == list_changes(None, None, own.digest)


def test_a_synthetic_header_s_origin_rewritten_as_a_download_fails(base_repo: Path, tmp_path: Path) -> None:
    """The Qwen3-30B-A3B Q4_K_M entry (a header passprice synth built) re-told as "downloaded from huggingface.co".
    Before: "claims changed, which the pricer does not read", its lock "to re-pin" (exit 0; re-pinned in the same
    pull request, it passed). Now it fails by name."""
    import re

    root, _ = _pull_request(base_repo, tmp_path)
    rel = "registry/checkpoints/qwen3-30b-a3b-q4_k_m.toml"
    text = (root / rel).read_text(encoding="utf-8")
    origin = re.search(r'^origin = "Synthetic, .*"$', text, re.M)
    assert origin is not None
    (root / rel).write_text(text.replace(origin.group(0), 'origin = "Qwen3-30B-A3B, Q4_K_M: the header of the GGUF '
                                        'downloaded from huggingface.co/Qwen"'), encoding="utf-8")
    result = invoke("diff", "main", root=root)
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        f"passprice: refused: HEAD fails passprice check (1 problem); first: {rel}: entry.origin: no longer opens "
        "with 'Synthetic', but its header (sha256 491821373572…) is a header passprice synth built (passprice's "
        "table of shipped synthetic headers): a synthetic header's price is no real checkpoint's; restore the origin\n")


def _sides(tmp_path: Path, edit: tuple[str, str]) -> tuple[object, object]:
    """BASE and HEAD stand-ins (only their ``code`` is read) whose ``src/passprice`` hold this checkout's
    ``unkept.py``, HEAD's with ``edit`` (old, new) applied once."""
    from types import SimpleNamespace

    from passprice.sidecode import Code

    text = (REPO / "src" / "passprice" / "unkept.py").read_text(encoding="utf-8")
    assert text.count(edit[0]) == 1, edit
    sides = []
    for name, body in (("base", text), ("head", text.replace(*edit))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "unkept.py").write_text(body, encoding="utf-8")
        sides.append(SimpleNamespace(code=Code(tmp_path / name, "sha256:" + "0" * 64, True, True)))
    return sides[0], sides[1]


QWEN_ROW = 'Unkept("qwen3-30b-a3b-q4_k_m", "qwen3-30b-a3b.json", "Q4_K_M")'


@pytest.mark.parametrize(("edit", "said"), [
    (('-o {self.name}"', '-o {self.name} --mix Q8_0"'),
     "src/passprice/unkept.py: Unkept.command (or CONFIGS) rewritten: it gives the command that writes each of the 17 "
     "shipped synthetic headers again, byte for byte, and passprice tells readers to run it; restore it"),
    ((QWEN_ROW, QWEN_ROW.replace("Q4_K_M", "Q8_0")),
     "src/passprice/unkept.py: UNKEPT: the row of header 491821373572… (qwen3-30b-a3b-q4_k_m) rewritten "
     "(qwen3-30b-a3b-q4_k_m, qwen3-30b-a3b.json, Q4_K_M → qwen3-30b-a3b-q4_k_m, qwen3-30b-a3b.json, Q8_0): it gives "
     "the command that writes those bytes again, and passprice tells readers to run it; restore the row"),
    ((QWEN_ROW, "Unkept(*NAMES)"),
     "src/passprice/unkept.py: UNKEPT does not read as a table of Unkept(NAME, CONFIG, MIX) string literals: the "
     "review cannot tell which command it gives for each shipped synthetic header"),
])
def test_a_shipped_synthetic_header_s_command_rewritten_fails(tmp_path: Path, edit: tuple[str, str], said: str) -> None:
    """Before: "passprice's own code changed: src/passprice/unkept.py" alone (exit 0), and once merged ``audit``,
    ``header`` and ``checkpoints`` sent readers to a command writing other bytes. Now each fails by name."""
    from passprice.review.records import unkept_changes

    base, head = _sides(tmp_path, edit)
    assert unkept_changes(base, head) == (said,)  # type: ignore[arg-type]


def test_a_reworded_docstring_of_the_command_fails_nothing(tmp_path: Path) -> None:
    from passprice.review.records import unkept_changes

    base, head = _sides(tmp_path, ("The command that writes the header again", "The command writing the header anew"))
    assert unkept_changes(base, head) == ()  # type: ignore[arg-type]


def test_a_lock_on_a_real_older_model_beside_an_edited_record_fails_the_review(base_repo: Path,
                                                                                tmp_path: Path) -> None:
    """A lock as restored from an older commit (pinning the first listed pricing model, which ``price --lock`` takes
    as an upgrade) beside its record edited 996.1 → 1,000 tokens/s: the review fails it thrice, as a model no code
    of the review has, as not reproducing and (slip 58) as a digest in no record of the list, and the list is
    untouched (nothing named of it but that)."""
    from test_slip_55 import OLDEST

    root, _ = _pull_request(base_repo, tmp_path)
    forge_record(root, R1, tokens_per_s=1000.0)
    _with_model(root, R1, OLDEST)
    result = invoke("diff", "main", root=root)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert f"  {R1}: lock.pricing_model: pins d82efb38ac44…, the digest of no code of this review (BASE's, HEAD's, " \
           "the running passprice's) nor of any BASE lock: a lock's pricing model is the digest passprice lock " \
           f"computes of the code that priced it, never typed by hand; re-lock it: passprice lock --update -o {R1}" \
        in lines
    assert any(x.startswith(f"  {R1}: does NOT reproduce: ") for x in lines)
    assert any(x.startswith(f"  {R1}: lock.digest: ") and UNRECORDED_SAYS in x for x in lines)
    assert not any(LISTED in x for x in lines if UNRECORDED_SAYS not in x)

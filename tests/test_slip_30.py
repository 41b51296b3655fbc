"""Slip round 30: a contributor wanting a locked price to rest on a stronger (or other) fact than the review, ``check``
or the pre-commit hook says, each attempt a real git repository (this checkout's registry committed on ``main``)
changed on a branch and reviewed as CI reviews it (``passprice diff main HEAD``).

Attempts that passed before their fix:

- (1) a fact carrying a derivation made stronger, nothing else changed: the H100 SXM's ``scale`` (estimated, a
  derivation over the card's vector rate) raised to ``published`` under its unchanged citation, its two locks
  re-locked: the review read "(stronger)", ✅, nothing to verify, where a fact without a derivation raised so asks
  whether its source states it. (1b) the same inside a rename of the card (``git mv`` to ``h100_sxm5.toml``, its two
  servings pointed there).
- (2) a look-alike card: the H200 card copied to ``h200_sхm_141gb.toml`` (a Cyrillic ``х``) with its measured
  ``streams.read`` raised 0.9333 → 0.9633 under the same citation ("Dot 4.48 TB/s"; the copy's derivation left out),
  the serving r1-qwen7b-h200 pointed at it and its two locks re-locked (996.1 → 1,027.2 tokens/s, +3.121 %): the
  review read ``card: h200_sxm_141gb → h200_sxm_141gb``, a change that prints as none, ✅. Every non-ASCII name a
  change line shows is spelled out after it now.
- (3) the known leftover "the forged-pin check skips a pin at a fact path only HEAD's code reads": a made-up
  ``stack.overhead.pass`` (3 µs, published, cited "nvidia-h200-datasheet: made up") pinned in r1's lock, a lock of
  no stack, its digests recomputed, beside a price-neutral edit of ``src/passprice``: "re-locked", exit 0, and
  ``check`` "ok". A path HEAD's code adds is no path of the running code's lock schema (HEAD's lock would not
  read), so the exception guarded nothing: every pin no side holds is named now.
- (4) a source record naming a registry document (``source.path``) and its ``sha256``, the document then edited alone:
  ``check`` (and so the hook) passed with 0 problems, the record's sha256 naming a copy the registry no longer
  holds. ``check`` hashes each such document now.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from pathlib import Path

import pytest

from cli_helpers import REPO, invoke, retitled
from passprice.facts import Fact
from passprice.locks import _canonical, _sorted
from test_diff import commit_all, git
from test_slip_34 import renderings  # one in-process review rendered per format

H100 = "h100_sxm5_80gb"
H100_LOCKS = ("gemma3-270m-h100", "gpt-oss-120b-h100", "qwen35-27b-h100-every8")


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository holding this checkout's registry (facts, registry, locks, sources, schema), committed on
    ``main``; each test works on a branch of its own made from it (:func:`branch`)."""
    path = tmp_path_factory.mktemp("slip30") / "registry"
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


def relock(path: Path, names: tuple[str, ...]) -> None:
    """``passprice lock --update -o locks/NAME.lock.toml`` for each of ``names``: each must succeed."""
    for name in names:
        done = invoke("lock", "--update", "-o", str(path / "locks" / f"{name}.lock.toml"), root=path)
        assert done.exit_code == 0, done.output


# --- (1) a fact carrying a derivation made stronger ------------------------------------------------------------------

SCALE = '[scale]\nvalue = 33.5\nunit = "Tcycle/s"\nprovenance = "estimated"\n'
# left60: its note says "Estimate (same basis for every GPU here)", which the question now names
STRONGER = ("the provenance is stronger (estimated → published) but its note says 'Estimate': a published figure is "
            "one its source states; does nvidia-hopper-whitepaper: Table 3, H100 SXM5 column: 16,896 FP32 cores "
            "(p. 18: '128 FP32 CUDA Cores per SM, 16896 FP32 CUDA Cores per GPU') state "
            "33.5 Tcycle/s, published?")


def _publish_scale(card: Path) -> None:
    text = card.read_text(encoding="utf-8")
    assert text.count(SCALE) == 1 and "derivation.formula" in text.split(SCALE)[1].split("\n[")[0]
    card.write_text(text.replace(SCALE, SCALE.replace("estimated", "published")), encoding="utf-8")


def test_a_derived_scale_made_published_asks_to_verify(registry: Path) -> None:
    path = branch(registry, "scale-published")
    _publish_scale(path / "facts" / "cards" / f"{H100}.toml")
    relock(path, H100_LOCKS)
    commit_all(path, "scale: published")
    status, (as_json, text) = renderings(path, "json", "text")
    out = json.loads(as_json)
    # was: "1 fact changed in 1 file; 2 locks affected, 2 re-locked", nothing to verify; then asked only (exit 0)
    assert out["summary"].startswith("1 fact changed in 1 file, 1 to verify in its source; 1 fact contradicted by "
                                     "the citation it kept; 3 locks affected, 3 re-locked"), out["summary"]
    assert out["to_verify"] == [f"{H100}:scale"]
    (change,) = [c for f in out["files"] for c in f["facts"]]
    assert change["strengthened"] and change["to_verify"] == STRONGER
    # its note opens "Estimate": raised under the words that call it one, it fails (tests/test_review_contradicted.py)
    assert out["contradicted"] == [f"{H100}:scale"]
    assert change["contradicted"] == ("the provenance was raised (estimated → published) under the citation it had, "
                                      "and its note says 'Estimate': cite the published source that states 33.5 "
                                      "Tcycle/s, or keep estimated")
    assert status == 1
    assert f"         to verify: {STRONGER}" in text.splitlines()


def test_a_derived_scale_made_published_in_a_rename_asks_to_verify(registry: Path) -> None:
    path = branch(registry, "scale-published-renamed")
    git(path, "mv", f"facts/cards/{H100}.toml", "facts/cards/h100_sxm5.toml")
    _publish_scale(path / "facts" / "cards" / "h100_sxm5.toml")
    for folder in ("servings", "measurements"):
        for file in (path / "registry" / folder).glob("*.toml"):
            text = file.read_text(encoding="utf-8")
            file.write_text(text.replace(f'card = "{H100}"', 'card = "h100_sxm5"'), encoding="utf-8")
    relock(path, H100_LOCKS)
    commit_all(path, "the H100 SXM card renamed; its scale published")
    out = json.loads(invoke("diff", "main", "HEAD", "--json", root=path).stdout)
    assert out["summary"].startswith("1 fact changed in 1 file, 1 to verify in its source; 1 fact contradicted by "
                                     "the citation it kept; 1 card renamed; "), out
    assert out["to_verify"] == ["h100_sxm5:scale"]
    assert out["contradicted"] == ["h100_sxm5:scale"]


# --- (2) a look-alike card -------------------------------------------------------------------------------------------

CARD = "h200_sxm_141gb"
LOOKALIKE = "h200_s\u0445m_141gb"  # a Cyrillic х (U+0445) for the x
R1 = "r1-qwen7b-h200"
READ = 'value = 0.9333\nunit = "1"\nprovenance = "measured"\n'


def test_a_serving_moved_to_a_look_alike_card_spells_its_name(registry: Path) -> None:
    path = branch(registry, "look-alike")
    text = (path / "facts" / "cards" / f"{CARD}.toml").read_text(encoding="utf-8")
    assert text.count(READ) == 1
    start, end = text.index("[streams.read]"), text.index("[streams.rewrite]")
    section = "".join(line for line in text[start:end].splitlines(keepends=True)
                      if not line.startswith("derivation."))
    copy = text[:start] + section.replace(READ, READ.replace("0.9333", "0.9633")) + text[end:]
    (path / "facts" / "cards" / f"{LOOKALIKE}.toml").write_text(retitled(copy, "NVIDIA H200 (a look-alike)"),
                                                                encoding="utf-8")
    serving = path / "registry" / "servings" / f"{R1}.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace(f'card = "{CARD}"', f'card = "{LOOKALIKE}"'),
                       encoding="utf-8")
    relock(path, (R1, f"{R1}-best", f"{R1}-llamacpp"))  # the stack lock rests on the serving too
    commit_all(path, "r1 on the H200, faster")
    status, (text, comment) = renderings(path, "text", "comment")
    assert status == 0, text  # an added card is a reviewer's to read: now it reads as one
    lines = text.splitlines()
    spelled = f"{LOOKALIKE} (spelled 'h200_s\\u0445m_141gb')"
    # was "  card: h200_sxm_141gb → h200_sхm_141gb", which prints as no change
    assert f"  card: {CARD} → {spelled}" in lines
    assert f"    serving   card: {CARD} → {spelled}" in lines
    assert f"facts/cards/{LOOKALIKE}.toml (card {spelled}): added" in lines
    assert "    tokens/s  996.1 → 1,027.2  (+3.121 %)" in lines
    assert (f"- `registry/servings/{R1}.toml` (changed): card: {CARD} → {LOOKALIKE} (spelled "
            "'h200_s\\\\u0445m_141gb')") in comment.splitlines()


# --- (3) a made-up pin at a path no side holds, beside a code edit --------------------------------------------------

R1_LOCK = f"locks/{R1}.lock.toml"
MADE_UP = {"value": 3, "unit": "us", "provenance": "published", "source": "nvidia-h200-datasheet",
           "locator": "made up"}


def _forge_stack_pin(lock: Path) -> None:
    """``lock`` with a ``stack.overhead.pass`` pin of :data:`MADE_UP` added, its fact digest and lock digest
    recomputed as someone copying the hashes would."""
    digest = Fact.from_entry(MADE_UP, "made up").digest()
    table = "".join(f"{k} = {json.dumps(v)}\n" for k, v in {"digest": digest, **MADE_UP}.items())
    text = lock.read_text(encoding="utf-8")
    assert text.count("\n[lock]\n") == 1
    text = text.replace("\n[lock]\n", f'\n[facts."stack.overhead.pass"]\n{table}\n[lock]\n')
    body = _sorted(tomllib.loads(text))
    stated = body["lock"].pop("digest")
    lock.write_text(text.replace(stated, "sha256:" + hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()),
                    encoding="utf-8")


def test_a_made_up_pin_at_a_path_no_side_holds_beside_a_code_edit_fails_the_review(tmp_path: Path) -> None:
    from test_slip_10 import _base
    from test_slip_29 import _tidy_code

    path = _base(tmp_path / "registry")
    git(path, "checkout", "-q", "-b", "pr")
    _forge_stack_pin(path / R1_LOCK)
    _tidy_code(path)
    commit_all(path, "a pin; tidy serving.py")
    result = invoke("diff", "main", "HEAD", "--json", root=path)
    out = json.loads(result.stdout)
    assert out["pricing_model"]["priced_with"][1].endswith("in its own process")
    # Was 0 ("re-locked"), then 1 (the pin "made up", a fact no side holds); since attack round 49 a `stack.*` pin
    # in a lock priced under no stack is bad input before any side is judged: HEAD's lock does not read (exit 2).
    assert result.exit_code == 2, result.output
    assert out["files"][0]["errors"]["head"] == [
        f'{R1_LOCK}: facts."stack.overhead.pass": a figure the lock\'s price does not read (it is priced under no '
        "stack: price.stack): passprice lock pins only what the price reads; re-lock it"
    ]


# --- (4) a registry document edited under its recorded sha256 -------------------------------------------------------

DOCUMENT = b"# My notes\nhot set: 58 of 128 experts take 90 % of the routing mass\n"


def test_a_document_edited_under_its_recorded_sha256_fails_check_and_the_review(registry: Path) -> None:
    path = branch(registry, "notes")
    (path / "notes").mkdir()
    (path / "notes" / "doc.md").write_bytes(DOCUMENT)
    stated = hashlib.sha256(DOCUMENT).hexdigest()
    (path / "sources" / "my-notes.toml").write_text(
        '[source]\ntitle = "My notes"\nkind = "registry"\npublisher = "me"\npath = "notes/doc.md"\n'
        f'sha256 = "{stated}"\nread = "how the figures were read off it"\n', encoding="utf-8")
    commit_all(path, "my notes, with their sha256")
    assert invoke("check", root=path).exit_code == 0
    # a revision's review holds each document empty and compares its identity: the record still holds there
    assert json.loads(invoke("diff", "main", "HEAD", "--json", root=path).stdout)["head_check"] == []
    git(path, "checkout", "-q", "-b", "notes-edited")
    edited = DOCUMENT.replace(b"58 of 128", b"48 of 128")
    (path / "notes" / "doc.md").write_bytes(edited)
    commit_all(path, "my notes: 48")
    line = (f"sources/my-notes.toml: source.sha256: {stated[:12]}… is not the sha256 of notes/doc.md (its bytes hash "
            f"to {hashlib.sha256(edited).hexdigest()}): the registry's document is not the copy that was read; "
            "restore it, or re-read it and record its sha256")
    checked = invoke("check", root=path)
    assert checked.exit_code == 2, checked.output  # was 0: "0 problems"
    assert checked.stderr.splitlines() == [f"passprice: error: {line}"]
    out = json.loads(invoke("diff", "notes", "HEAD", "--json", root=path).stdout)
    assert out["head_check"] == [line] and out["exit_status"] == 2

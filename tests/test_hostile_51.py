"""Attack round 51 (issue 13: hostile input on session 28's additions), each found first against a non-editable
install of this checkout, then here in a copy of passprice's own registry. Each test builds its reproducer and asserts
the exit status and the exact line; the docstring or a comment says what it did before.

1. ``lock R1 --stack /elsewhere/my.stack.toml`` (a stack given by path, as ``price --stack`` reads one) wrote
   ``locks/NAME.lock.toml``, then exited 2 ("stack 'my.stack': not found in facts/stacks"): a file written by a
   command that failed, a lock ``check`` failed and ``price --lock`` refused.
2. ``lock R1 -o …/site-packages/passprice/_data/locks/x.lock.toml`` run outside a registry wrote into the installed
   package, exit 0, and ``check`` then listed it as "the built-in registry's locks/x.lock.toml: ok".
3. A lock's ``[stack] name`` (with ``price.stack``) re-digested to ``a/b``, ``..``, ``../../etc`` or 5,000 characters:
   ``reproduce`` and ``audit`` exit 0, ``check`` "FAIL" (exit 1), ``price --lock`` exit 2 naming no lock and no key.
4. A lock with its ``[stack]`` table, ``price.stack`` and ``stack.*`` facts removed but ``price.expected`` kept:
   ``reproduce`` "does not reproduce" (exit 1), ``price --lock`` exit 0.
5. A pinned origin of one letter and 3,990 combining marks, NFD beside today's NFC: the spelled span of ``check``,
   ``reproduce`` and ``price --lock`` was one line of 48,034 characters (``check``'s spelled word 28,202).
6. ``diff registry`` where ``registry`` is both the folder and a tag advised ``heads/registry``, which names nothing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from cli_helpers import bad, copy_root, invoke
from test_hostile_49 import R1, STACK, STACKED, _locked, _refused_everywhere, _rewritten

RESTORE = "(edited by hand?): restore the lock from the last commit that holds it as written, or re-lock it"
ENTRY = "registry/checkpoints/deepseek-r1-distill-qwen-7b-q4_k_m.toml"


# --- 1. lock --stack PATH --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("file_name", ["my.stack.toml", f"{STACK}.toml"])
def test_a_stack_given_by_a_path_outside_the_registry_is_refused_before_the_lock_is_written(
    tmp_path: Path, file_name: str
) -> None:
    root = copy_root(tmp_path)
    elsewhere = tmp_path / "elsewhere" / file_name
    elsewhere.parent.mkdir()
    elsewhere.write_bytes((root / "facts" / "stacks" / f"{STACK}.toml").read_bytes())
    name = file_name.removesuffix(".toml")
    said = bad("lock", R1, "--batch", "1", "--stack", str(elsewhere), "--name", "r1-p", root=root)
    assert said == [
        f"passprice: error: --stack {elsewhere}: not a stack of {root / 'facts' / 'stacks'}: a lock pins its stack by "
        f"name ({name}) and price --lock, check and reproduce read it from {root / 'facts' / 'stacks'}/{name}.toml; "
        "copy the file there, or price under it without a lock (price --stack)"
    ]
    assert not (root / "locks" / "r1-p.lock.toml").exists()  # was written, then exit 2


def test_a_registered_stack_given_by_its_path_is_still_locked(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    done = invoke("lock", R1, "--batch", "1", "--stack", str(root / "facts" / "stacks" / f"{STACK}.toml"),
                  "--name", "r1-p", root=root)
    assert done.exit_code == 0, done.output
    assert (root / "locks" / "r1-p.lock.toml").is_file()
    assert invoke("reproduce", str(root / "locks" / "r1-p.lock.toml"), root=root).exit_code == 0


# --- 2. lock -o into the installed package ---------------------------------------------------------------------------

def _installed() -> Path | None:
    """The embedded registry when it lies inside the installed package (CI installs passprice non-editable)."""
    from passprice.registry import _PACKAGE, embedded_root

    data = embedded_root().path
    return data if data == _PACKAGE / "_data" else None


@pytest.mark.skipif(_installed() is None, reason="an editable install's embedded registry is its source checkout")
def test_lock_o_into_the_installed_packages_registry_is_refused(tmp_path: Path) -> None:
    from passprice.registry import _PACKAGE

    data = _installed()
    assert data is not None
    output = data / "locks" / "a51-hostile.lock.toml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSPRICE_")}
    env["PASSPRICE_CACHE_DIR"] = os.environ["PASSPRICE_CACHE_DIR"]  # the session's own cache (conftest.py)
    try:
        done = subprocess.run([sys.executable, "-m", "passprice", "lock", R1, "--batch", "1", "-o", str(output)],
                              cwd=tmp_path, env=env, capture_output=True, timeout=300)  # fmt: skip
        assert (done.returncode, done.stdout) == (2, b""), done.stderr.decode()
        assert done.stderr.decode().splitlines() == [
            f"passprice: error: {output}: -o would write into {_PACKAGE}/, passprice's own package: write the lock "
            "elsewhere"
        ]
        assert not output.exists()  # was written, exit 0
    finally:
        output.unlink(missing_ok=True)


# --- 3. a pinned stack name that names no stack file -----------------------------------------------------------------

@pytest.mark.parametrize(("name", "why"), [
    ("a/b", "a stack's name is a file's name in facts/stacks, without a folder; re-lock it"),
    ("..", "a stack's name is a file's name in facts/stacks, without a folder; re-lock it"),
    ("../../etc", "a stack's name is a file's name in facts/stacks, without a folder; re-lock it"),
    ("a" * 5000, "5,000 bytes, where a stack file's name holds at most 250 before .toml; re-lock it"),
    ("-x", "the name -x starts with '-', which a command line reads as an option (`passprice price -x` says no such "
           "option, as does every command passprice advises with it); re-lock it"),
])
def test_a_pinned_stack_name_that_names_no_stack_file_is_refused_everywhere(tmp_path: Path, name: str,
                                                                             why: str) -> None:
    # Before: reproduce and audit exit 0, check "1 of 12 locks FAIL" (exit 1), price --lock exit 2 with "a/b: no
    # such stack file: …" naming neither the lock nor the key.
    from passprice.schema import shown_value

    root = _locked(tmp_path)

    def rename(document: dict[str, object]) -> None:
        document["stack"]["name"] = name  # type: ignore[index]
        document["price"]["stack"] = name  # type: ignore[index]

    _rewritten(root / STACKED, rename)
    _refused_everywhere(root, STACKED, f"stack.name: {shown_value(name)} is no stack's name: {why}")
    assert bad("audit", str(root / STACKED), root=root) == [
        f"passprice: error: {root / STACKED}: stack.name: {shown_value(name)} is no stack's name: {why}"
    ]


# --- 4. a stack's expected price left in a lock under no stack ------------------------------------------------------

def test_an_expected_price_left_in_a_lock_under_no_stack_is_refused_everywhere(tmp_path: Path) -> None:
    root = _locked(tmp_path)

    def unstack(document: dict[str, object]) -> None:
        document.pop("stack")
        document["price"].pop("stack")  # type: ignore[attr-defined]
        facts = document["facts"]
        for path in [p for p in facts if p.startswith("stack.")]:  # type: ignore[attr-defined]
            facts.pop(path)  # type: ignore[attr-defined]

    _rewritten(root / STACKED, unstack)
    said = ("price.expected: a figure of a price under a stack, in a lock priced under none (no stack table, no "
            f"price.stack) {RESTORE}")
    _refused_everywhere(root, STACKED, said)  # was: reproduce exit 1, price --lock exit 0
    assert bad("audit", str(root / STACKED), root=root) == [f"passprice: error: {root / STACKED}: {said}"]


# --- 5. a spelled span is bounded ------------------------------------------------------------------------------------

def test_a_normalisation_change_of_thousands_of_marks_is_spelled_on_a_bounded_line(tmp_path: Path) -> None:
    root = _locked(tmp_path)
    text = "Zoe" + "\u0308" * 3990
    entry = root / ENTRY
    entry.write_text(re.sub(r"(?m)^origin = .*$", lambda _: "origin = " + json.dumps(
        unicodedata.normalize("NFC", text), ensure_ascii=False), entry.read_text(encoding="utf-8")), encoding="utf-8")
    _rewritten(root / STACKED, lambda d: d["checkpoint"].__setitem__("origin", unicodedata.normalize("NFD", text)))
    marks = "\\u0308" * 63
    said = (f"checkpoint.origin: Zo['e{marks}'… (3,991 code points) → '\\xeb{marks}'… (3,990 code points)] (the "
            "same text in another Unicode normalisation, NFD → NFC: it prints the same) (the lock pinned the old)")
    reproduced = invoke("reproduce", STACKED, root=root)
    assert reproduced.exit_code == 0, reproduced.output
    assert f"    relabelled     {said}" in reproduced.stdout.splitlines()  # was one line of 48,034 characters
    priced = invoke("price", "--lock", STACKED, root=root)
    assert priced.exit_code == 0, priced.output
    assert f"                relabelled since the lock: {said}" in priced.stdout.splitlines()
    checked = invoke("check", root=root)
    assert checked.exit_code == 0, checked.output
    assert f"    {said}" in checked.stdout.splitlines()
    # the other locks' origin changed to the 3,993-character text: shown as it is, its word spelled to 64 code points
    # (was 28,202 characters: the word spelled whole)
    assert max(len(line) for line in checked.stdout.splitlines()) < 4100 + 2 * 600


def test_spell_counts_what_it_leaves_out() -> None:
    from passprice.errors import SPELL_MOST, spell

    assert spell("e\u0301") == "'e\\u0301'"
    assert spell("x" * SPELL_MOST) == repr("x" * SPELL_MOST)
    assert spell("\u0301" * 1000) == "'" + "\\u0301" * 64 + "'… (1,000 code points)"


# --- 6. diff: a tag named as a folder --------------------------------------------------------------------------------

@pytest.mark.parametrize("annotated", [False, True])
def test_a_tag_named_as_a_folder_is_advised_as_a_tag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     annotated: bool) -> None:
    root = copy_root(tmp_path)

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false",
                               "-c", "tag.gpgsign=false", *args], cwd=root, check=True, capture_output=True,
                              text=True).stdout.strip()  # fmt: skip

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "registry")
    git("tag", *(("-a", "-m", "a tag") if annotated else ()), "registry")
    git("branch", "facts")
    monkeypatch.chdir(root)
    sha = git("rev-parse", "HEAD")[:12]
    assert bad("diff", "registry", root=root) == [  # was: "or heads/registry (or the commit id)", naming nothing
        f"passprice: error: registry: names both a folder here and the revision {sha} of the git checkout; write "
        "./registry for the folder, or tags/registry (or the commit id) for the revision"
    ]
    assert invoke("diff", "tags/registry", root=root).exit_code == 0
    assert bad("diff", "facts", root=root) == [
        f"passprice: error: facts: names both a folder here and the revision {sha} of the git checkout; write "
        "./facts for the folder, or heads/facts (or the commit id) for the revision"
    ]
    assert invoke("diff", "heads/facts", root=root).exit_code == 0


# --- 7. a measured run's stack given as a path -----------------------------------------------------------------------

MEASURED = "registry/measurements/xiongjiedai-llama3-llamabench.toml"


@pytest.mark.parametrize("stack", [f"../stacks/{STACK}", f"{STACK}.toml", "a/b", "..", "../../etc/passwd"])
def test_a_runs_stack_given_as_a_path_is_refused(tmp_path: Path, stack: str) -> None:
    # Before: `stack = "../stacks/llamacpp-cuda-2405"` was priced by validate under that stack ("164.8 +13.2 %"),
    # exit 0, while calibrate left the run out of its fit and check called the stack's facts stale ("now a run of
    # stack ../stacks/llamacpp-cuda-2405, not llamacpp-cuda-2405"), exit 1; the others exit 0 or 1 alike.
    root = copy_root(tmp_path)
    path = root / MEASURED
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"(?m)^stack = .*$", lambda _: f"stack = {json.dumps(stack)}", text, count=1),
                    encoding="utf-8")
    line = (f"passprice: error: {MEASURED}: run.0.stack: {stack!r} is a path, not a stack's name: a run names its "
            "stack as facts/stacks/NAME.toml is named (NAME, registered or not), without a folder or .toml")
    for command in (("validate",), ("calibrate", "--stack", STACK, "--dry-run"), ("check",)):
        result = invoke(*command, root=root)  # validate and check go on with the other files, as for any bad file
        assert result.exit_code == 2, (command, result.output)
        assert line in result.stderr.splitlines(), command
        assert "Traceback" not in result.output


# --- 8. diff in a repository with no commit --------------------------------------------------------------------------

@pytest.mark.parametrize("revision", ["HEAD", "main"])
def test_a_revision_of_a_repository_with_no_commit_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           revision: str) -> None:
    root = copy_root(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    monkeypatch.chdir(root)
    # was: "HEAD: neither a folder nor a revision of the git checkout at ROOT" alone, where `diff` says why
    assert bad("diff", revision, root=root) == [
        f"passprice: error: {revision}: neither a folder nor a revision of the git checkout at {root} (the git "
        "checkout has no commit yet: commit the registry first, or compare two folders)"
    ]


def test_the_review_of_an_origin_renormalised_spells_a_bounded_span(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: diff's "claims changed" line spelled both 3,991-code-point spans whole, 48,220 characters.
    root = copy_root(tmp_path)
    text = "Zoe" + "\u0308" * 3990
    entry = root / ENTRY
    original = entry.read_text(encoding="utf-8")

    def origin(form: str) -> None:
        entry.write_text(re.sub(r"(?m)^origin = .*$", lambda _: "origin = " + json.dumps(
            unicodedata.normalize(form, text), ensure_ascii=False), original), encoding="utf-8")

    origin("NFC")
    for args in (("init", "-q"), ("add", "-A"), ("-c", "user.name=t", "-c", "user.email=t@t", "-c",
                                                 "commit.gpgsign=false", "commit", "-qm", "nfc")):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    origin("NFD")
    monkeypatch.chdir(root)
    result = invoke("diff", root=root)
    assert result.exit_code == 0, result.output
    marks = "\\u0308" * 63
    span = (f"entry.origin Zo['\\xeb{marks}'… (3,990 code points) → 'e{marks}'… (3,991 code points)] (the same text in "
            "another Unicode normalisation, NFC → NFD: it prints the same)")
    assert any(span in line for line in result.stdout.splitlines()), result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) < 1500


# --- 9. stray subtables of a fact named five at a time ---------------------------------------------------------------

def test_thousands_of_stray_subtables_of_a_fact_are_named_five_and_counted(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: check's line and the listings' --json "problems" named all 5,000 (44,033 characters); only the
    # `passprice: error:` line of a command that stops was cut (to 3,552). Then five named and the rest counted; since
    # attack65 a table past 4,096 keys is one line before jsonschema walks it (30,000 inputs printed 30,003 lines).
    # Since tests/test_bound111.py 5,000 subtables ([memory.bandwidth.xN], 10,000 dots) are refused unparsed, past a
    # card's separators: 5,000 stray keys of the table, under a byte cap raised to 1 MiB (16,384 separators).
    monkeypatch.setenv("PASSPRICE_MAX_FILE_BYTES", str(1 << 20))
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    stray = "".join(f"x{i} = 1\n" for i in range(5000))
    text = card.read_text(encoding="utf-8")
    assert text.count("\n[memory.bandwidth]\n") == 1
    card.write_text(text.replace("\n[memory.bandwidth]\n", f"\n[memory.bandwidth]\n{stray}"), encoding="utf-8")
    assert card.stat().st_size < 256 << 10
    said = ("memory.bandwidth: a table of 5,005 keys (no passprice file holds one of more than 4,096, and this file "
            "does not validate): make it smaller")
    checked = invoke("check", root=root)
    assert checked.exit_code == 2, checked.output
    assert f"passprice: error: facts/cards/h200_sxm_141gb.toml: {said}" in checked.stderr.splitlines()
    listed = invoke("cards", "--json", root=root)
    assert listed.exit_code == 2
    assert f"facts/cards/h200_sxm_141gb.toml: {said}" in json.loads(listed.stdout)["problems"]
    assert bad("price", R1, root=root) == [f"passprice: error: {card}: {said}"]

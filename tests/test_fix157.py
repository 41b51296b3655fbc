"""What a second new user found on main (issue 13), each reproduced in a registry ``passprice init --examples``
made, as the README starts one (a temporary, git-initialised folder).

1. A FIFO or a folder in place of a lock file: the review said ``1 lock affected, 1 removed`` and exited 0 while
   ``check`` on the same tree exited 2 (``1 lock file does not read``). Now the review refuses it, named, in
   ``check``'s words (a symbolic link there was already refused).
2. ``core.autocrlf true``: the advice's example (``sources/excerpts/*.txt -text``), committed, still failed on the
   documents registry sources cite (``facts/cards/README.md``); it said "the committed bytes its record pins" of
   files no record pins, and "no .gitattributes rule" where a ``text=auto`` rule is what makes ``core.eol`` apply.
3. ``reproduce`` of a lock lagging the running code named the running passprice (requirements.txt's pinned line) as
   "the lock's code", to install.
4. ``max-batch --stack`` printed its most (603) but, unlike ``best --stack``, its ``spread`` lacked
   ``stack_last_max_batch`` (302) and its line said nothing of the stack's room.
5. ``synth`` of a dense configuration holding Qwen-MoE's ``decoder_sparse_step`` / ``mlp_only_layers`` was refused
   ("passprice builds a routed FFN in every block"); ``"mlp_only_layers": "0"`` was told to write ``["0"]`` (which
   then failed), and ``null`` read Python's ``None is not of type 'array'``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cli_helpers import bad, invoke
from test_left52 import _git

LOCK = "locks/r1-qwen7b-h200.lock.toml"  # every floor it sets is kept by another lock: removing it fails nothing


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry as the README starts one: ``passprice init --examples``, then git init and a first commit."""
    root = tmp_path_factory.mktemp("fix157") / "mine"
    assert invoke("init", "--examples", str(root)).exit_code == 0
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "start")
    return root


def _copy(started: Path, tmp_path: Path) -> Path:
    import shutil

    root = tmp_path / "mine"
    shutil.copytree(started, root, symlinks=True)
    return root


# --- (1) a FIFO or a folder in place of a lock ---------------------------------------------------------------------


def test_1_the_example_lock_removed_alone_fails_nothing(started: Path, tmp_path: Path) -> None:
    # The yardstick: the file really gone is a removal the review passes (exit 0), as it said of the FIFO.
    root = _copy(started, tmp_path)
    (root / LOCK).unlink()
    result = invoke("diff", "HEAD", root=root)
    assert result.exit_code == 0, result.output
    assert "no fact changed; 1 lock affected, 1 removed; 9 locks unaffected" in result.stdout


def test_1_a_fifo_in_place_of_a_lock_is_refused_as_check_fails_it(started: Path, tmp_path: Path) -> None:
    root = _copy(started, tmp_path)
    (root / LOCK).unlink()
    os.mkfifo(root / LOCK)
    check = invoke("check", root=root)
    assert check.exit_code == 2 and "1 lock file does not read" in check.stdout, check.output
    line = f"{LOCK}: is a FIFO (named pipe), not a regular file: passprice reads regular files only"
    assert f"passprice: error: {line}" in check.stderr.splitlines()
    # Was exit 0, "1 lock affected, 1 removed".
    assert bad("diff", "HEAD", root=root) == [f"passprice: error: {line}"]


def test_1_a_folder_in_place_of_a_lock_is_refused_as_check_fails_it(started: Path, tmp_path: Path) -> None:
    root = _copy(started, tmp_path)
    (root / LOCK).unlink()
    (root / LOCK).mkdir()
    check = invoke("check", root=root)
    assert check.exit_code == 2, check.output
    assert f"passprice: error: {LOCK}: is a folder, not a file" in check.stderr.splitlines()
    assert bad("diff", "HEAD", root=root) == [f"passprice: error: {LOCK}: is a folder, not a file"]
    # Committed (a folder holding a file: git keeps no empty one), the revision's side says so too.
    (root / LOCK / "a").write_text("", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "folder")
    head = _git(root, "rev-parse", "--short=12", "HEAD")
    assert bad("diff", "HEAD~1", "HEAD", root=root) == [
        f"passprice: error: {LOCK} at {head}: is a folder, not a file"]


def test_1_a_symbolic_link_in_place_of_a_lock_is_still_refused(started: Path, tmp_path: Path) -> None:
    root = _copy(started, tmp_path)
    (root / LOCK).unlink()
    (root / LOCK).symlink_to("../facts/r1-qwen7b-h200-best.lock.toml")
    assert bad("diff", "HEAD", root=root) == [
        f"passprice: error: {LOCK}: a symbolic link; passprice diff compares the files themselves (commit the file, "
        "or the folder's files, in place of the link)"]
    # A link to a lock file beside it is that lock under a second name, as check reads it: the review warns of it
    # in check's words and exits 0 (tests/test_odds165.py; it was refused as above)
    (root / LOCK).unlink()
    (root / LOCK).symlink_to("r1-qwen7b-h200-best.lock.toml")
    result = invoke("diff", "HEAD", root=root)
    assert result.exit_code == 0, result.output
    warned = (f"{LOCK} is a symbolic link to locks/r1-qwen7b-h200-best.lock.toml beside it: judged once, as "
              "locks/r1-qwen7b-h200-best.lock.toml (every command reads the link as that lock)")
    assert f"  warning: {warned}" in result.stdout.splitlines()
    assert warned in json.loads(invoke("check", "--json", root=root).stdout)["warnings"]


# --- (2) the advice on core.autocrlf covers every file it names ------------------------------------------------------


def test_2_committing_the_advised_lines_exactly_passes(started: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = _copy(started, tmp_path)
    # a registry init made before it wrote .gitattributes (tests/test_eol_rules.py): no rule
    _git(root, "rm", "-q", ".gitattributes")
    _git(root, "commit", "-q", "--no-verify", "-m", "no rules")
    _git(root, "config", "core.autocrlf", "true")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("passprice: error: facts/cards/README.md and 14 more files: git writes their line ends "
                           "as CRLF in a checkout (core.autocrlf=true, a setting of .git/config, no .gitattributes "
                           "rule), so a checkout's bytes are not the committed bytes a review reads "), line
    # Was `sources/excerpts/*.txt -text` alone: committed, the two documents registry sources cite still failed.
    advised = ("(`facts/cards/README.md -text`, `facts/stacks/README.md -text`, `schema/*.json -text`, "
               "`sources/excerpts/*.txt -text`, ")
    assert advised in line and "its record pins" not in line, line
    rules = re.findall(r"`([^`]* -text)`", line)
    (root / ".gitattributes").write_text("".join(f"{rule}\n" for rule in rules), encoding="utf-8")
    _git(root, "add", ".gitattributes")
    _git(root, "commit", "-q", "--no-verify", "-m", "the advice")
    assert invoke("check", root=root).exit_code == 0
    assert invoke("diff", "HEAD~1", "HEAD", root=root).exit_code == 0


def test_2_core_eol_names_the_text_rule_it_applies_through(started: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = _copy(started, tmp_path)
    _git(root, "config", "core.eol", "crlf")
    (root / ".gitattributes").write_text("* text=auto\n", encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    # Was "no .gitattributes rule", though the rule is what makes core.eol apply.
    assert "(core.eol=crlf, a setting of .git/config, applied by the .gitattributes rule `text=auto` on them)" in line
    assert line.endswith("`sources/excerpts/*.txt -text`, committed, after the `text=auto` rule: every machine's "
                         "checkout then keeps their bytes)"), line


def test_2_the_example_lines_by_folder_and_extension() -> None:
    from passprice.gitread import _unset_text_lines

    # init's lines first (gitread.BYTE_EXACT_RULES), then those of the paths they miss (tests/test_eol_rules.py)
    assert _unset_text_lines(["a/x.txt", "a/y.txt", "b/README.md"]) == (
        "`a/*.txt -text`, `b/README.md -text`, `facts/cards/README.md -text`, `facts/stacks/README.md -text`, "
        "`schema/*.json -text`, `sources/excerpts/*.txt -text`")
    assert _unset_text_lines(["a b/x.txt"]) == "`* -text`"  # a space a pattern would split at
    assert _unset_text_lines([f"d{i}/x.txt" for i in range(7)]) == "`* -text`"  # past 6 lines
    assert _unset_text_lines([f"d{i}/x.txt" for i in range(6)]).count(" -text`") == 6 + 4  # and init's 4


# --- (3) reproduce, when the requirement named is the running passprice ---------------------------------------------

PINNED = "passprice @ git+file:///home/me/passprice@" + "0123456789abcdef" * 2 + "01234567"


def _lagging(started: Path, tmp_path: Path, line: str) -> tuple[Path, Path, str]:
    """The registry with ``line`` as its requirements.txt line and one lock whose pricing model is another code's
    (:data:`cli_helpers.LISTED_MODEL`, re-digested as passprice's writer would), committed: its root, the lock and
    the commit (12 digits)."""
    from cli_helpers import LISTED_MODEL
    from test_newcomer_29 import _redigested

    root = _copy(started, tmp_path)
    (root / "requirements.txt").write_text(f"# how CI installs passprice\n{line}\n", encoding="utf-8")
    lock = root / "locks" / "qwen3-30b-a3b-h200.lock.toml"
    _redigested(lock, lock, LISTED_MODEL)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--no-verify", "-m", "lagging lock")
    return root, lock, _git(root, "rev-parse", "HEAD")[:12]


def test_3_the_running_passprice_is_not_named_as_the_lock_s_code(started: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import scaffold

    monkeypatch.setattr(scaffold, "installed_requirement", lambda: scaffold.Requirement(PINNED, "local"))
    root, lock, wrote = _lagging(started, tmp_path, PINNED)
    result = invoke("reproduce", str(lock), root=root)
    assert result.exit_code == 0, result.output  # every recorded field reproduces
    [said] = [x for x in result.stdout.splitlines() if x.startswith("    pricing model  ")]
    now = invoke("reproduce", str(lock), "--json", root=root)
    digest = json.loads(now.stdout)["pricing_model"]["now"].removeprefix("sha256:")[:12]
    # Was: "the lock's code is the passprice this registry's requirements.txt named at commit C (…), `PINNED`:
    # install it in a virtual environment of its own …", the code running here, whose digest is not the lock's.
    assert said == (
        f"    pricing model  changed (d82efb38ac44 → {digest}); the lock's code is unknown: the passprice this "
        f"registry's requirements.txt named at commit {wrote} ({_git(root, 'log', '-1', '--format=%cs')}: the oldest "
        f"commit whose locks record d82efb38ac44), `{PINNED}`, is this passprice, whose pricing model is {digest}, "
        "not the lock's d82efb38ac44: the lock was written by another passprice (one installed otherwise, or its "
        "digest edited); install the passprice whose locks record it, if you know it, or re-lock it with this one "
        "and review the change (README: The price a lock recorded, from the code that wrote it)")
    assert "install it in a virtual environment" not in result.stdout


def test_3_another_requirement_is_still_named_as_the_lock_s_code(started: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from passprice import scaffold

    monkeypatch.setattr(scaffold, "installed_requirement", lambda: scaffold.Requirement(PINNED, "local"))
    other = PINNED[:-8] + "89abcdef"  # another commit: the lock's code may be it
    root, lock, wrote = _lagging(started, tmp_path, other)
    said = invoke("reproduce", str(lock), root=root).stdout
    assert f"`{other}`: install it in a virtual environment of its own (`git show {wrote}:requirements.txt" in said
    # an unpinned folder (`pip install /path`, uncommitted changes) may have moved since: not taken for this code
    monkeypatch.setattr(scaffold, "installed_requirement",
                        lambda: scaffold.Requirement("passprice @ file:///home/me/passprice", "local"))
    root, lock, wrote = _lagging(started, tmp_path / "b", "passprice @ file:///home/me/passprice")
    said = invoke("reproduce", str(lock), root=root).stdout
    assert "`passprice @ file:///home/me/passprice`: install it in a virtual environment" in said


# --- (4) max-batch --stack says the spread in the stack's room, as best --stack does -------------------------------


def test_4_max_batch_under_a_stack_has_the_same_key_and_line(started: Path) -> None:
    qwen, llama = "qwen3-30b-a3b-h200", "llamacpp-cuda-2405"
    result = invoke("max-batch", qwen, "--stack", llama, "--json", root=started)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    best = json.loads(invoke("best", qwen, "--stack", llama, "--json", root=started).stdout)["spread"]
    # 302 by hand (tests/test_odds150.py): 141e9 B less 18.55 GB held once less 536,870,912 B reserved, over
    # 402,653,184 B a sequence at position 4,095, is 302.8. Was absent here.
    assert document["spread"]["stack_last_max_batch"] == 302 and document["spread"] == best
    assert document["expected_max_batch"] == 603 and document["max_batch"] == 605
    text = invoke("max-batch", qwen, "--stack", llama, root=started)
    assert text.exit_code == 0, text.output
    [line] = [x for x in text.stdout.splitlines() if x.startswith("  spread ")]
    assert line.endswith("memory would hold 304 (`--position 4095`); under stack llamacpp-cuda-2405, whose runtime "
                         "reserves 536.9 MB, 302 would fit were every sequence there, so its max batch 603 fits only "
                         "while their positions stay spread"), line


# --- (5) synth: Qwen-MoE's dense-block keys on a dense model -------------------------------------------------------

CONFIGS = Path(__file__).resolve().parent.parent / "examples" / "configs"


def _with(tmp_path: Path, name: str, **changes: object) -> Path:
    document = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    document["config"].update(changes)
    path = tmp_path / f"{len(list(tmp_path.iterdir()))}-{name}"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "changes"), [
    ("llama-3.1-8b.json", {"decoder_sparse_step": 2}),
    ("deepseek-r1-distill-qwen-7b.json", {"mlp_only_layers": [0]}),  # qwen2
    ("deepseek-r1-distill-qwen-7b.json", {"mlp_only_layers": "0"}),  # was: write ["0"]
])
def test_5_a_dense_model_ignores_the_moe_dense_block_keys(tmp_path: Path, name: str,
                                                          changes: dict[str, object]) -> None:
    plain, out = tmp_path / "plain.gguf", tmp_path / "x.gguf"
    (tmp_path / "configs").mkdir()
    if changes.get("mlp_only_layers") == "0":  # a string is still no list: the advice, then followed, builds
        path = _with(tmp_path / "configs", name, **changes)
        assert bad("synth", str(path), "-o", str(out)) == [
            f"passprice: error: {path}: config.mlp_only_layers: '0' is one string, not a list: write [0] (Qwen-MoE: "
            "the blocks with a dense FFN (read only to refuse any in a mixture of experts; ignored on a dense model))"]
        changes = {"mlp_only_layers": [0]}
    result = invoke("synth", str(_with(tmp_path / "configs", name, **changes)), "-o", str(out))
    assert result.exit_code == 0, result.output  # was exit 2, "passprice builds a routed FFN in every block"
    assert invoke("synth", str(CONFIGS / name), "-o", str(plain)).exit_code == 0
    # ignored: the very tensors the published config makes (the header's bytes name the file it was made from)
    assert _tensors(out) == _tensors(plain) and len(_tensors(out)) > 100


def _tensors(path: Path) -> list[tuple[str, tuple[int, ...], int]]:
    from passprice.gguf_header import read_header

    return [(t.name, tuple(t.dims), t.type_id) for t in read_header(path, cache=False).tensors]


def test_5_a_mixture_of_experts_still_refuses_them(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    path = _with(tmp_path / "configs", "qwen3-30b-a3b.json", mlp_only_layers=[0])
    assert bad("synth", str(path), "-o", str(tmp_path / "x.gguf")) == [
        f"passprice: error: {path}: config: mlp_only_layers [0]: passprice builds a routed FFN in every block; dense "
        "blocks among routed ones are not built (give [])"]


def test_5_null_is_said_in_words(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    path = _with(tmp_path / "configs", "deepseek-r1-distill-qwen-7b.json", mlp_only_layers=None)
    # Was: "config.mlp_only_layers: None is not of type 'array'" (Python's None, not the file's null).
    assert bad("synth", str(path), "-o", str(tmp_path / "x.gguf")) == [
        f"passprice: error: {path}: config.mlp_only_layers: is null, not a list: give one, or leave the key out "
        "where it is optional"]


def test_3_a_lock_that_does_not_reproduce_says_its_writer_unknown(started: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import tomlkit

    from passprice import scaffold
    from passprice.digests import sha256
    from passprice.locks import _PREAMBLE, _canonical, lock_document, read_lock

    monkeypatch.setattr(scaffold, "installed_requirement", lambda: scaffold.Requirement(PINNED, "local"))
    root, lock, _ = _lagging(started, tmp_path, PINNED)
    body = lock_document(read_lock(lock))  # its recorded price moved too, every digest recomputed
    body["price"]["tokens_per_s"] = 10_000.0
    del body["lock"]["digest"]
    body["lock"]["digest"] = "sha256:" + sha256(_canonical(body).encode("utf-8")).hexdigest()
    lock.write_text(_PREAMBLE + tomlkit.dumps(body), encoding="utf-8")
    _git(root, "commit", "-q", "--no-verify", "-am", "moved")
    wrote = _git(root, "rev-parse", "HEAD~1")[:12]  # the oldest commit whose locks record the lock's model
    result = invoke("reproduce", str(lock), root=root)
    assert result.exit_code == 1, result.output
    verdict = result.stdout.splitlines()[1]
    assert verdict.startswith("  does NOT reproduce: the pricing model changed and moves the price (first: "), verdict
    # Was: "the lock's own price comes from the code that wrote it: the passprice this registry's requirements.txt
    # named at commit C (…), installed in a virtual environment of its own".
    assert verdict.endswith(
        f"the code that wrote the lock is unknown: the passprice this registry's requirements.txt named at commit "
        f"{wrote} is this one (pricing model, below); re-lock it with today's code (`passprice lock --update -o "
        f"{lock}`) and review the change"), verdict

"""Three left-overs from issue 13's notes, each reproduced here.

1. ``git config core.autocrlf true`` (or ``core.eol crlf`` under a ``text`` rule), no ``.gitattributes`` rule: a
   checkout writes the stored excerpts and byte-read documents with CRLF line ends, and ``check`` and the review
   passed it; only a checkout's pin mismatch said so, after the fact. Now both refuse it by name, as they refuse an
   ``eol=crlf`` rule (tests/test_fix146.py), with advice that works.
3. Two right-shaped forged cache entries answered from their false values (tests/test_forge110.py's ``LEFT``): a
   drafting method of 2 acceptance figures where its file has 3, a stack document without its optional ``memory``
   table. Each is checked against the bytes of the file its key was made of, and is a miss.
2. ``best --stack S`` said nothing of a paged batch's spread (``--json``'s ``spread`` was ``null``): the limit's 605
   sequences of ``qwen3-30b-a3b-h200`` fit only at the mean position (304 at the last) with or without a stack. Now
   the same line and key, and what the room the stack's runtime leaves (the card less ``memory.reserved``) holds.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice import drafts, schema
from passprice.gitread import LineEndSetting, _config_converts, _is_binary

EXCERPT = "sources/excerpts/cite102-excerpt.txt"
QWEN = "qwen3-30b-a3b-h200"
LLAMA = "llamacpp-cuda-2405"

# --- (2) best --stack's spread -------------------------------------------------------------------------------------


def test_2_best_under_a_stack_says_the_spread_of_both_rooms() -> None:
    alone = json.loads(invoke("best", QWEN, "--json").stdout)["spread"]
    result = invoke("best", QWEN, "--stack", LLAMA, "--json")
    assert result.exit_code == 0, result.output
    spread = json.loads(result.stdout)["spread"]  # was None
    # The limit's batch, counted in the card's memory: as without the stack, by the same function.
    assert {k: v for k, v in spread.items() if k != "stack_last_max_batch"} == alone
    assert alone["last_max_batch"] == 304 and alone["last_held_per_sequence"] == 402_653_184  # 384 MiB: 4,096 positions
    # By hand: 141e9 B less 18.55 GB held once (max-batch's line) less the stack's 536,870,912 B reserved (512 MiB)
    # is 121.91e9 B, over 402,653,184 B a sequence at position 4,095: 302.8, so 302 (303 needs under 18.46 GB held
    # once, 302 at most 18.86 GB: 18.55 GB, rounded to four figures, lies between).
    assert spread["stack_last_max_batch"] == 302
    max_batch = json.loads(invoke("max-batch", QWEN, "--stack", LLAMA, "--json").stdout)
    assert max_batch["reserved_bytes"] == 536_870_912 and max_batch["expected_max_batch"] == 603  # at the mean


def test_2_best_under_a_stack_prints_the_spread_line() -> None:
    result = invoke("best", QWEN, "--stack", LLAMA)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("  spread ")]
    assert lines == [
        "  spread        605 sequences counted each at the mean position 2,048 (202.1 MB a sequence, the paged "
        "cache's position + half a page): they fit only while their positions stay spread about it; were every "
        "sequence at its last position, 4,095 of its 4,096 limit (402.7 MB a sequence: its limit's whole pages), "
        "memory would hold 304 (`--position 4095`); under stack llamacpp-cuda-2405, whose runtime reserves 536.9 MB, "
        "302 would fit were every sequence there, so its best batch 1 fits however their positions stand"], lines
    # a contiguous cache holds its limit whatever the position: no line, null, under a stack too
    assert json.loads(invoke("best", "r1-qwen7b-h200", "--stack", LLAMA, "--json").stdout)["spread"] is None
    assert "spread  " not in invoke("best", "r1-qwen7b-h200", "--stack", LLAMA).stdout


# --- (1) core.autocrlf / core.eol, no rule -------------------------------------------------------------------------


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git registry, its first commit the checkout's registry (no rules), no user or system config read."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = copy_root(tmp_path)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "registry")
    return root


def _refusal(setting: str, where: str = ".git/config", at: str = "",
             fix: str = "set `git config core.autocrlf false` in this repository", rule: str = "no .gitattributes rule",
             after: str = "") -> str:
    # the 13 excerpts and the 2 documents sources name that are no TOML file (facts/cards/README.md,
    # facts/stacks/README.md): the files fix146's eol=crlf rule names
    return (f"passprice: error: facts/cards/README.md and 14 more files{at}: git writes their line ends as CRLF in a "
            f"checkout ({setting}, a setting of {where}, {rule}), so a checkout's bytes are not the "
            "committed bytes a review reads (and `git checkout` writes them so again); "
            f"{fix}, or set -text on passprice's files in .gitattributes (`facts/cards/README.md -text`, "
            "`facts/stacks/README.md -text`, `schema/*.json -text`, `sources/excerpts/*.txt -text`, "
            f"committed{after}: every machine's checkout then keeps their bytes)")


def test_1_check_names_core_autocrlf_before_a_checkout_misses_a_pin(repo: Path) -> None:
    assert invoke("check", root=repo).exit_code == 0
    _git(repo, "config", "core.autocrlf", "true")
    result = invoke("check", root=repo)
    assert result.exit_code == 2, result.output  # was 0, "all holds": the files here are still LF
    assert result.stderr.splitlines() == [_refusal("core.autocrlf=true")], result.stderr
    # the advice: the setting off for this repository
    _git(repo, "config", "core.autocrlf", "false")
    assert invoke("check", root=repo).exit_code == 0
    # or, the setting kept, -text on the files read byte for byte (committed, it holds on every machine)
    _git(repo, "config", "core.autocrlf", "true")
    (repo / ".gitattributes").write_text("sources/excerpts/*.txt -text\nfacts/*/README.md -text\n", encoding="utf-8")
    assert invoke("check", root=repo).exit_code == 0
    _git(repo, "config", "core.autocrlf", "input")  # converts on commit only: a checkout keeps LF
    (repo / ".gitattributes").unlink()
    assert invoke("check", root=repo).exit_code == 0


def test_1_a_clone_under_core_autocrlf_is_told_the_setting_up_front(repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "-c", "core.autocrlf=true", str(repo), str(clone)], check=True,
                   capture_output=True)  # the setting kept in the clone's .git/config
    data = (clone / EXCERPT).read_bytes()
    assert b"\r\n" in data and data.replace(b"\r\n", b"\n") == (repo / EXCERPT).read_bytes()
    result = invoke("check", root=clone)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    # the pins each missed say the setting that wrote them so (the files named by no record that reads are left to
    # those lines: a source whose excerpt misses its pin does not read)
    said = [line for line in lines if f"source.excerpt: {EXCERPT}'s sha256" in line]
    assert said and ("it is the pinned text with CRLF line ends, which git's line-end conversion writes in a checkout "
                     "(an eol=crlf or text rule of .gitattributes, or core.autocrlf; here core.autocrlf=true, a "
                     "setting of .git/config) and `git checkout` writes again while it applies") in said[0], said
    # the advice followed: the setting off, the files written again (git passes over a file its index calls unchanged)
    _git(clone, "config", "core.autocrlf", "false")
    for path in (clone / "sources/excerpts").iterdir():
        path.unlink()
    for name in ("facts/cards/README.md", "facts/stacks/README.md"):
        (clone / name).unlink()
    _git(clone, "checkout", "--", "sources/excerpts", "facts/cards/README.md", "facts/stacks/README.md")
    assert (clone / EXCERPT).read_bytes() == (repo / EXCERPT).read_bytes()
    assert invoke("check", root=clone).exit_code == 0


def test_1_core_eol_crlf_converts_only_files_a_text_rule_marks(repo: Path) -> None:
    _git(repo, "config", "core.eol", "crlf")
    assert invoke("check", root=repo).exit_code == 0  # no text rule: git converts nothing
    (repo / ".gitattributes").write_text("* text=auto\n", encoding="utf-8")
    result = invoke("check", root=repo)
    assert result.exit_code == 2, result.output  # was 0
    # The rule is what makes core.eol apply: said so (was "no .gitattributes rule"; tests/test_fix157.py).
    assert result.stderr.splitlines() == [_refusal("core.eol=crlf", fix="set `git config core.eol lf` in this "
                                                   "repository", rule="applied by the .gitattributes rule "
                                                   "`text=auto` on them", after=", after the `text=auto` rule")
                                          ], result.stderr
    # The example's lines, after that rule, hold.
    (repo / ".gitattributes").write_text("* text=auto\nfacts/cards/README.md -text\nfacts/stacks/README.md -text\n"
                                         "sources/excerpts/*.txt -text\n", encoding="utf-8")
    assert invoke("check", root=repo).exit_code == 0
    (repo / ".gitattributes").write_text("* text=auto eol=lf\n", encoding="utf-8")  # eol=lf wins over the setting
    assert invoke("check", root=repo).exit_code == 0


def test_1_the_environments_setting_is_named_with_its_own_advice(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.autocrlf=true'")  # git -c core.autocrlf=true, to a hook
    result = invoke("check", root=repo)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [_refusal(
        "core.autocrlf=true", "GIT_CONFIG_PARAMETERS",
        fix="unset it where git is run (GIT_CONFIG_PARAMETERS: `git -c` or GIT_CONFIG_*)")], result.stderr


def test_1_the_review_refuses_it_too(repo: Path) -> None:
    (repo / "facts/cards/README.md").write_text("changed\n", encoding="utf-8")
    _git(repo, "commit", "-qam", "a change")
    head = _git(repo, "rev-parse", "HEAD")[:12]
    assert invoke("diff", "HEAD~1", "HEAD", root=repo).exit_code == 0
    _git(repo, "config", "core.autocrlf", "true")
    result = invoke("diff", "HEAD~1", "HEAD", root=repo)
    assert result.exit_code == 2, result.output  # was 0
    assert _refusal("core.autocrlf=true", at=f" at {head}") in result.stderr.splitlines(), result.stderr
    (repo / ".gitattributes").write_text("sources/excerpts/*.txt -text\nfacts/*/README.md -text\n", encoding="utf-8")
    _git(repo, "add", ".gitattributes")
    _git(repo, "commit", "-qm", "-text")
    assert invoke("diff", "HEAD~1", "HEAD", root=repo).exit_code == 0  # the revision's -text rule holds


def test_1_what_git_converts_as_it_decides() -> None:
    every = LineEndSetting("core.autocrlf", "true", ".git/config", True)
    eol = LineEndSetting("core.eol", "crlf", ".git/config", False)
    text = b"a quote\nanother line\n"
    assert _config_converts({}, text, every) and not _config_converts({}, text, eol)
    assert _config_converts({"text": "auto"}, text, eol) and _config_converts({"text": "set"}, text, eol)
    assert not _config_converts({"text": "unset"}, text, every)  # -text, binary
    assert not _config_converts({"crlf": "unset"}, text, every)  # -crlf, text's older name
    assert not _config_converts({"eol": "lf"}, text, every)
    assert not _config_converts({}, b"a\0b\n", every) and _is_binary(b"a\0b\n")  # a NUL: git's binary guess
    assert not _config_converts({}, b"a\rb\n", every)  # a lone carriage return: binary too
    assert not _config_converts({}, b"a\r\nb\r\n", every)  # committed CRLF: auto leaves it
    assert _config_converts({"text": "set"}, b"a\r\nb\n", every)  # text: its LF alone converts
    assert not _config_converts({}, b"no line end", every)
    assert _is_binary(bytes(range(1, 8)) * 2 + b"x" * 200) and not _is_binary(b"\x01" + b"x" * 200)


# --- (3) right-shaped forgeries checked against their file's bytes ---------------------------------------------------


def test_3_a_drafting_method_short_of_its_files_figures_does_not_hold() -> None:
    path = REPO / "facts/drafts/qwen35-mtp.toml"
    raw = path.read_bytes()
    method = drafts.method_from_document("qwen35-mtp", schema.load(path, "draft", kept=False), str(path))
    assert len(method.acceptance) == 3 and drafts.all_figures(method, raw)
    short = drafts.DraftMethod(method.name, method.title, method.acceptance[:2], method.kind, method.checkpoints,
                               method.note)
    assert not drafts.all_figures(short, raw)  # was served: check found the locks' acceptance.3 gone
    for written in (b"[acceptance]\n3 = {value = 0.5}\n", b"acceptance.3.value = 0.5\n", b'[ "acceptance" . "3" ]\n'):
        assert not drafts.all_figures(short, written), written
    assert drafts.all_figures(short, b'note = "3 = x"\n[acceptance.1]\n[acceptance.2]\n')  # no figure 3 starts


def test_3_a_document_without_an_optional_key_its_file_gives_does_not_hold() -> None:
    folder = str(schema.schema_dir())
    path = REPO / "facts/stacks/llamacpp-cuda-2405.toml"
    raw = path.read_bytes()
    document = schema.load(path, "stack", kept=False)
    assert "memory" in document and "memory" in schema._optional_keys("stack", folder)
    dropped = {k: v for k, v in document.items() if k != "memory"}
    assert schema._shaped(dropped, "stack", folder)  # right-shaped at the top level: what was served
    assert schema._absent_absent(document, "stack", folder, raw)
    assert not schema._absent_absent(dropped, "stack", folder, raw)
    # a file without the table, or naming it only inside a value or below another table, gives no such key
    for text in (b'note = "memory = x"\n', b"[stack]\nmemory = 1\n", b"[other.memory]\nx = 1\n"):
        assert schema._absent_absent(dropped, "stack", folder, text), text
    for text in (b"memory.reserved = 1\n", b'"memory" = {reserved = 1}\n', b"[memory.reserved]\n", b"[ memory ]\n"):
        assert not schema._absent_absent(dropped, "stack", folder, text), text

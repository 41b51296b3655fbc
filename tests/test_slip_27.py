"""Slip round 27: a pull-request author changing what a locked price rests on past the review, ``check`` and the
pre-commit hook (a registry made by ``passprice init --examples``, committed on ``main``, changed on a branch).

- (1) A serving's checkpoint entry edited (``output.weight`` Q6_K → Q4_K) while the entry as it was is copied under
  another name (``registry/checkpoints/r1-copy.toml``): every pricing command of the serving refuses it
  (``CheckpointChanged``) and the review fails it, but ``check`` reproduced each lock from the copy, found by content,
  and said "all holds" (exit 0), its checkpoint line "the pinned content … is now entry r1-copy (renamed or moved)".
  Today's price under the lock is now the refusal ``price`` gives, so ``check`` fails, and the checkpoint line says
  the entry's content changed.
- (2) A ``.gitattributes`` rule ``facts/cards/h200_sxm_141gb.toml working-tree-encoding=ISO646-KR``: git re-encodes
  the committed card in every checkout, where the committed ``₩`` is a backslash. A ``₩`` closing a note escaped the
  note's closing quotes in the checkout, so the committed card (what the review reads) said ``memory.capacity = 141``
  and every checkout (what ``check`` and ``price`` read) 150 GB: the review said no price moved (exit 0), ``check``
  reported drift (exit 0), and ``best r1-qwen7b-h200`` went from batch 580 to 618. A file passprice reads that git
  rewrites in a checkout (``working-tree-encoding``, ``filter``, ``ident``) is refused by name now, by the review (on
  HEAD) and by ``check``; the hooks watch ``.gitattributes`` too (a commit of the rule alone ran no hook).
- (3) A source record moved to another document (``commit`` of ``azure-ai-benchmarking-guide`` rewritten): the review
  asked to verify the facts citing it, as designed, but said "no lock affected; 8 locks unaffected" of a source seven
  locked prices rest on. The question and the summary name those locks now (never failing: a lock pins the id).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_helpers import REPO, copy_root, invoke
from test_diff import commit_all, git

R1 = "r1-qwen7b-h200"
ENTRY = "deepseek-r1-distill-qwen-7b-q4_k_m"
CARD = "facts/cards/h200_sxm_141gb.toml"


def _registry(tmp_path: Path) -> Path:
    """A git repository holding this checkout's registry (facts, registry, locks, sources, schema), committed on
    ``main``, with a branch ``pr`` checked out."""
    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "a registry")
    git(path, "checkout", "-q", "-b", "pr")
    return path


# --- (1) the serving's entry edited, the pinned content kept in a copy -----------------------------------------------


def test_an_edited_entry_beside_a_copy_of_the_pinned_one_fails_check(tmp_path: Path) -> None:
    root = copy_root(tmp_path)
    entries = root / "registry" / "checkpoints"
    entry = entries / f"{ENTRY}.toml"
    text = entry.read_text(encoding="utf-8")
    (entries / "r1-copy.toml").write_text(text.replace(f'name = "{ENTRY}"', 'name = "r1-copy"'), encoding="utf-8")
    edited = text.replace('{ name = "output.weight", type = "Q6_K"', '{ name = "output.weight", type = "Q4_K"')
    assert edited != text
    entry.write_text(edited, encoding="utf-8")
    result = invoke("check", root=root)
    assert result.exit_code == 1, result.output  # was 0, "all holds"
    lines = result.stdout.splitlines()
    at = lines.index(f"lock {R1} (locks/{R1}.lock.toml, locks serving {R1}): FAILS")
    assert lines[at + 3] == (f"  checkpoint: {ENTRY}: content changed (169f62b972aa… pinned, 8beb681fdb0f… today); "
                             "the pinned content is in entry r1-copy")
    assert lines[at + 4] == (
        f"  floors: today's inputs refuse the price: lock {R1} pinned checkpoint {ENTRY} with content 169f62b972aa…, "
        "and the entry now holds other content (8beb681fdb0f…): its content changed since the lock (an edited tensor "
        "table or metadata), so the lock's floors and price are not this checkpoint's; review the change and re-lock "
        f"(`passprice lock --update -o {root}/locks/{R1}.lock.toml`, through review), or price without the lock "
        "(--no-lock)"
    )
    assert lines[-1] == "check FAILED"
    locks = {s["name"]: s for s in json.loads(invoke("check", "--json", root=root).stdout)["locks"]}
    # the shipped stack lock pins the entry too
    assert {n for n, s in locks.items() if not s["ok"]} == {R1, "r1-qwen7b-h200-best", "r1-qwen7b-h200-llamacpp",
                                                            "r1-qwen7b-mi300x-int8kv"}
    assert locks[R1]["refusal"] == "CheckpointChanged"
    # price said so before: the check now agrees with it
    priced = invoke("price", R1, root=root)
    assert priced.exit_code == 1 and priced.stderr.startswith("passprice: refused: CheckpointChanged: ")
    # reproduce re-prices the lock from the copy holding the pinned content, and no longer calls the edited entry
    # "renamed or moved" (the lead, session 15)
    reproduced = invoke("reproduce", R1, root=root)
    assert reproduced.exit_code == 0, reproduced.output
    assert (f"    checkpoint     {ENTRY}: content changed (169f62b972aa… pinned, 8beb681fdb0f… today); the pinned "
            "content is in entry r1-copy, which the lock is reproduced from") in reproduced.stdout.splitlines()


def test_the_serving_pointed_at_the_copy_still_holds(tmp_path: Path) -> None:
    """The copy named by the serving (a renamed entry, content as pinned) is no change: check passes it."""
    root = copy_root(tmp_path)
    entries = root / "registry" / "checkpoints"
    text = (entries / f"{ENTRY}.toml").read_text(encoding="utf-8")
    (entries / "r1-copy.toml").write_text(text.replace(f'name = "{ENTRY}"', 'name = "r1-copy"'), encoding="utf-8")
    serving = root / "registry" / "servings" / f"{R1}.toml"
    serving.write_text(serving.read_text(encoding="utf-8").replace(f'checkpoint = "{ENTRY}"', 'checkpoint = "r1-copy"'),
                       encoding="utf-8")
    status = {s["name"]: s for s in json.loads(invoke("check", "--json", root=root).stdout)["locks"]}[R1]
    assert status["refusal"] is None and status["holds"], status


# --- (2) a .gitattributes rule rewriting a card in every checkout ----------------------------------------------------


def _toggled_card(text: str, hidden: str) -> str:
    """``text`` (the H200 card) with its ``memory.capacity`` and ``host.write`` tables written as dotted keys at the
    top, where the committed file says ``memory.capacity.value = 141`` and, re-encoded to ISO646-KR (the committed
    ``₩`` a backslash), ``memory.capacity.value = HIDDEN``: the ``₩`` closing the note escapes its closing quotes
    in a checkout, and each line ending in ``# ₩`` then continues the note there."""

    def cut(header: str) -> list[str]:
        nonlocal text
        found = re.search(r"^\[" + re.escape(header) + r"\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M)
        assert found is not None
        text = text[: found.start()] + text[found.end():]
        return [line for line in found.group(1).splitlines() if line.strip()]

    capacity, host = cut("memory.capacity"), cut("host.write")
    note = next(line for line in capacity if line.startswith("note = "))
    value = next(line for line in capacity if line.startswith("value = "))
    top = [
        f'memory.capacity.note = """{note[len("note = "):].strip(chr(34))}\u20a9""" # \u20a9',
        f"memory.capacity.{value} # \u20a9",
        'host.write.note = """',
        f'memory.capacity.value = {hidden} # """',
        *(f"memory.capacity.{line}" for line in capacity if line not in (note, value)),
        *(f"host.write.{line}" for line in host),
        "",
    ]
    at = text.index("[card]")
    return text[:at] + "\n".join(top) + text[at:]


REWRITE_LINE = (
    "git rewrites it in a checkout (working-tree-encoding=ISO646-KR, a rule of .gitattributes{at}), so what a review "
    "reads from git is not what check and price read in a checkout; remove the rule for passprice's files"
)


def test_a_card_git_rewrites_in_a_checkout_fails_the_review_and_check(tmp_path: Path) -> None:
    path = _registry(tmp_path)
    committed = _toggled_card((path / CARD).read_text(encoding="utf-8"), "150")
    (path / ".gitattributes").write_text(f"{CARD} working-tree-encoding=ISO646-KR\n", encoding="utf-8")
    try:
        checkout = subprocess.run(["iconv", "-f", "UTF-8", "-t", "ISO646-KR"], input=committed.encode("utf-8"),
                                  capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("no iconv with ISO646-KR here")
    (path / CARD).write_bytes(checkout)
    try:
        commit_all(path, "h200: notes")  # git re-encodes the checkout's bytes into the committed UTF-8
    except subprocess.CalledProcessError:
        pytest.skip("this git cannot encode ISO646-KR")
    assert git(path, "show", f"HEAD:{CARD}").count("\u20a9") == 3  # the review reads the committed text …
    (path / CARD).unlink()
    git(path, "checkout", "--", CARD)
    assert (path / CARD).read_bytes() == checkout  # … every checkout the re-encoded one: 150 GB
    shown = invoke("fact", "show", "h200_sxm_141gb", "memory.capacity", root=path).stdout
    assert "memory.capacity          150 GB  published" in shown.splitlines()
    checked = invoke("check", root=path)
    assert checked.exit_code == 2, checked.output  # was 0: drift on memory.capacity, reported and passed
    assert checked.stderr == f"passprice: error: {CARD}: {REWRITE_LINE.format(at='')}\n"
    reviewed = invoke("diff", "main", "HEAD", root=path)
    assert reviewed.exit_code == 2, reviewed.output  # was 0: "4 locks affected, 4 to re-pin", +0 % each
    head = git(path, "rev-parse", "HEAD")[:12]
    assert reviewed.stderr == f"passprice: error: {CARD} at {head}: {REWRITE_LINE.format(at=' at ' + head)}\n"
    # a rule for files passprice does not read is left alone, and so is one that only sets line ends
    (path / ".gitattributes").write_text("*.gguf filter=lfs\n*.toml eol=lf\n", encoding="utf-8")
    (path / CARD).write_bytes((REPO / CARD).read_bytes())
    commit_all(path, "h200 as on main; rules for other files")
    assert invoke("check", root=path).exit_code == 0
    assert invoke("diff", "main", "HEAD", root=path).exit_code == 0


def test_the_hooks_run_on_a_commit_of_gitattributes_alone() -> None:
    """Both hooks ran on a ``files:`` pattern naming .gitattributes since round 27; they run on every commit now
    (slip 29: ``always_run``), and test_slip_29 commits such files through pre-commit."""
    import yaml

    from passprice.scaffold import pre_commit_config, published_hooks

    (local,) = yaml.safe_load(pre_commit_config())["repos"][0]["hooks"]
    (hook,) = yaml.safe_load(published_hooks())
    assert local["always_run"] is hook["always_run"] is True


# --- (3) a source moved to another document names the locks resting on it --------------------------------------------

RESTING = ["gemma3-270m-h100", "gpt-oss-120b-h100", "qwen3-30b-a3b-h200", "qwen35-27b-h100-every8",
           "qwen35-27b-h200-mtp", "qwen35-27b-ws1-trailing", "r1-qwen7b-h200", "r1-qwen7b-h200-best",
           "r1-qwen7b-h200-llamacpp"]


def test_a_source_moved_to_another_document_names_the_locked_prices_resting_on_it(tmp_path: Path) -> None:
    path = _registry(tmp_path)
    source = path / "sources" / "azure-ai-benchmarking-guide.toml"
    text = source.read_text(encoding="utf-8")
    moved = text.replace('commit = "8fd0c6e1bd0f853ef8f0500a3640a7d80a2a92ef"', f'commit = "{"0" * 40}"')
    assert moved != text
    source.write_text(moved, encoding="utf-8")
    commit_all(path, "azure guide at another commit")
    result = invoke("diff", "main", "HEAD", "--json", root=path)
    assert result.exit_code == 0, result.output  # asked, never failed: a lock pins the id, not the document
    out = json.loads(result.stdout)
    (change,) = out["sources_changed"]
    assert change["locks"] == RESTING  # as `passprice sources` counts them: 9
    assert change["to_verify"].endswith(
        # walk53: the stacks fitted to runs on the cards whose shares cite it
        "which cite it, and the measured runs of stack llamacpp-cuda-2405 (9 fitted facts rest on them, priced on "
        "cards a100_pcie_80gb, a100_sxm4_80gb, h100_pcie_80gb, whose streams.read, streams.append rest on it) and the "
        "measured runs of stack lmdeploy-turbomind-2312 (7 fitted facts rest on them, priced on card a100_sxm4_80gb, "
        "whose streams.read, streams.append rest on it)? "
        "The locked prices of gemma3-270m-h100, gpt-oss-120b-h100, qwen3-30b-a3b-h200, "
        "qwen35-27b-h100-every8, qwen35-27b-h200-mtp, qwen35-27b-ws1-trailing and 3 more rest on them (a lock pins "
        "the id, not the document)."
    )
    assert "1 source whose document changed, to verify (under 9 locked prices); no lock affected" in out["summary"]
    markdown = invoke("diff", "main", "HEAD", "--format", "markdown", root=path).stdout
    assert "and 3 more rest on them (a lock pins the id, not the document)." in markdown

"""Issue 13's leftovers from session 30's closing note (task left31), each reproduced here first.

1. Under ``--root /abs/link`` (a symbolic link to ``/abs/real``) ``reproduce zz`` and ``fact show zz`` named the
   resolved folder (``/abs/real/locks``, ``/abs/real/facts/cards/zz.toml``) where ``price zz`` said
   ``registry/servings``. One rule (DESIGN, Command line): a root named by ``--root DIR`` is written as DIR was typed.
2. ``fact show CARD`` printed the card file's absolute path; now relative to the root, as other commands name it.
3. Paths at the start of error lines under an absolute ``--root``: decided, one rule in ``registry.as_given`` — the
   leading file opens from the working folder (the root as the user named it); names inside a line are root-relative.
4. ``compare --stack`` warned "ws1_hypothetical is hypothetical's" (a card's vendor is free text): now "has vendor X".
5. ``roofline --plot`` of a mixture of experts named no routing record: its title (the plot's and the text's) does.
6. ``audit --step -10``, ``10%`` and ``0.1TB/s`` were refused without saying what is accepted: now said.
7. Four sources with ``retrieved = "unknown"``: no date could be established; each note says so and why.
8. facts.yml's review labelled the compared head "work tree": it now diffs ``HEAD``, labelled ``HEAD (SHA)``.
9. The audit's elasticities held derived facts as written: the line under the table gives each such fact's
   elasticity with the facts derived from it re-derived (``--json`` ``elasticity_rederived``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib
import pytest

from cli_helpers import REPO, copy_root, invoke
from passprice.registry import embedded_root
from passprice.scaffold import workflow

LOCKS = ("gemma3-270m-h100, gpt-oss-120b-h100, qwen3-30b-a3b-h200, qwen35-27b-h100-every8, qwen35-27b-h200-mtp, "
         "qwen35-27b-ws1-trailing, r1-qwen7b-h200, r1-qwen7b-h200-best, r1-qwen7b-h200-llamacpp, "
         "r1-qwen7b-mi300x-int8kv")
CARD_PATHS = ("memory.capacity, memory.bandwidth, on_chip.capacity, on_chip.bandwidth, streams.read, streams.rewrite, "
              "streams.append, array, vector, scale, host.capacity, host.read, host.write, host.stream, tensor.f16, "
              "tensor.bf16, tensor.f8")


@pytest.fixture(scope="module")
def linked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the link, the folder it names): a registry reached through a symbolic link, as ``--root`` gives it."""
    real = copy_root(tmp_path_factory.mktemp("real"))
    link = tmp_path_factory.mktemp("named") / "link"
    link.symlink_to(real, target_is_directory=True)
    return link, real


# --- 1 and 3. the root as the user typed it, in every command's error lines -----------------------------------------

def test_1_reproduce_names_the_link_it_was_given_not_the_folder_it_resolves_to(linked: tuple[Path, Path]) -> None:
    link, real = linked
    out = invoke("reproduce", "zz", root=link)
    # before: "… and not in {real}/locks (…)"
    assert (out.exit_code, out.stdout) == (2, "")
    assert out.stderr == f"passprice: error: lock 'zz': no such file, and not in {link}/locks (locks: {LOCKS})\n"
    assert str(real) not in out.stderr


def test_1_fact_show_of_a_missing_card_names_the_link(linked: tuple[Path, Path]) -> None:
    link, real = linked
    out = invoke("fact", "show", "zz", root=link)
    assert out.exit_code == 2 and out.stdout == ""
    (line,) = out.stderr.splitlines()
    # before: "a new card is a file of its own, {real}/facts/cards/zz.toml, … e.g. {real}/facts/cards/mi300x.toml"
    assert (f"a new card is a file of its own, {link}/facts/cards/zz.toml, written by hand (copy a registered card's "
            f"file, e.g. {link}/facts/cards/mi300x.toml, and edit it)") in line
    assert str(real) not in line


def test_3_a_line_s_leading_file_opens_from_the_working_folder_below_the_root_as_typed(
        linked: tuple[Path, Path]) -> None:
    link, real = linked
    for root in (link, real):  # the link as typed; an absolute root that is no link, unchanged (absolute)
        out = invoke("fact", "show", "h200_sxm_141gb", "nope", root=root)
        assert (out.exit_code, out.stdout) == (2, "")
        assert out.stderr == (f"passprice: error: {root}/facts/cards/h200_sxm_141gb.toml: nope: not a card fact path "
                              f"(one of {CARD_PATHS})\n")
    # a registry name inside a line stays relative to the root, whatever the root's spelling
    out = invoke("price", "zz", root=link)
    assert out.exit_code == 2
    assert out.stderr.startswith("passprice: error: serving 'zz': not found in registry/servings (registered: ")


# --- 2. fact show names the card file relative to the root ----------------------------------------------------------

def test_2_fact_show_names_the_card_file_relative_to_the_root(linked: tuple[Path, Path]) -> None:
    link, _ = linked
    for root in (link, REPO):
        out = invoke("fact", "show", "h200_sxm_141gb", "memory.bandwidth", root=root)
        assert out.exit_code == 0, out.output
        # before: "h200_sxm_141gb (/…/facts/cards/h200_sxm_141gb.toml)"
        assert out.stdout.splitlines()[0] == "h200_sxm_141gb (facts/cards/h200_sxm_141gb.toml)"
    shown = invoke("fact", "show", "qwen35-mtp", "acceptance.1", "--draft", root=link)
    assert shown.stdout.splitlines()[0] == "qwen35-mtp (facts/drafts/qwen35-mtp.toml)"
    record = invoke("fact", "show", "llamacpp-cuda-2405", "stack.share.read", root=link)
    assert record.stdout.splitlines()[0] == "llamacpp-cuda-2405 (facts/stacks/llamacpp-cuda-2405.toml), a serving stack"
    # --json keeps the absolute file (machine-usable), as every --json "path" does
    data = json.loads(invoke("fact", "show", "h200_sxm_141gb", "--json", root=link).stdout)
    assert Path(data["file"]).resolve() == (link / "facts/cards/h200_sxm_141gb.toml").resolve()


# --- 4. a vendor is never put in the possessive ---------------------------------------------------------------------

def test_4_compare_under_a_stack_says_each_card_s_vendor_without_a_garbled_possessive() -> None:
    out = invoke("compare", "r1-qwen7b-h200", "--stack", "llamacpp-cuda-2405")
    assert out.exit_code == 0, out.output
    (line,) = [x for x in out.stderr.splitlines() if "extrapolate across cards" in x]
    # before: "every card its runs measured is NVIDIA's, ws1_hypothetical is hypothetical's, mi300x is AMD's, …"
    assert ("; and every card its runs measured has vendor NVIDIA, ws1_hypothetical has vendor hypothetical, mi300x "
            "has vendor AMD, sn40l has vendor SambaNova: the stack's kernels never ran on such a card as measured")\
        in line
    assert not re.search(r"'s[,:]", line), line


def test_4_no_other_sentence_puts_a_vendor_in_the_possessive() -> None:
    source = REPO / "src" / "passprice"
    if not source.is_dir():
        pytest.skip("the package's source is not beside the tests")
    found = [f"{p.name}: {line.strip()}" for p in source.rglob("*.py")
             for line in p.read_text(encoding="utf-8").splitlines() if re.search(r"vendor[^\n]*\}'s\b", line)]
    assert found == []


# --- 5. a MoE roofline names its routing record in its title --------------------------------------------------------

ROUTED = ("routed experts: a hot set of 58 of 128 experts (45.31 %) takes 90 % of the routed token-slots, measured "
          "(qwen3-30b-a3b-measured)")


def test_5_the_roofline_of_a_mixture_of_experts_names_its_routing_record(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    out = invoke("roofline", "h200_sxm_141gb", "qwen3-30b-a3b-h200")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    at = lines.index("qwen3-30b-a3b-h200: qwen3-30b-a3b-q4_k_m on NVIDIA H200 SXM 141GB")
    assert lines[at + 2] == ROUTED
    data = json.loads(invoke("roofline", "h200_sxm_141gb", "qwen3-30b-a3b-h200", "--json").stdout)
    assert data["title"].splitlines()[-1] == ROUTED
    # the picture: text kept as text in the SVG, so its title can be read; each line wrapped to the picture's width
    monkeypatch.setitem(matplotlib.rcParams, "svg.fonttype", "none")
    plot = tmp_path / "moe.svg"
    drawn = invoke("roofline", "h200_sxm_141gb", "qwen3-30b-a3b-h200", "--plot", str(plot))
    assert drawn.exit_code == 0, drawn.output
    svg = plot.read_text(encoding="utf-8")
    assert "routed experts: a hot set of 58 of 128 experts (45.31 %) takes 90 % of the routed token-slots," in svg
    assert "measured (qwen3-30b-a3b-measured)" in svg
    # a dense checkpoint's title has no such line
    dense = json.loads(invoke("roofline", "h200_sxm_141gb", "r1-qwen7b-h200", "--json").stdout)
    assert len(dense["title"].splitlines()) == 2 and "routed" not in dense["title"]


# --- 6. audit --step says what it accepts ---------------------------------------------------------------------------

@pytest.mark.parametrize(("step", "line"), [
    ("-10", "-10 is out of range (a finite number from 0.0001 to 50); a step is a size, not a direction: each fact "
            "is moved that much higher, or that much lower where higher is refused (marked (−N %)): give --step 10"),
    ("-80", "-80 is out of range (a finite number from 0.0001 to 50); a step is a size, not a direction: each fact "
            "is moved that much higher, or that much lower where higher is refused (marked (−N %)): give a percent "
            "from 0.0001 to 50"),
    ("10%", "'10%' is not a number (a finite number from 0.0001 to 50); write the percent without its % sign: "
            "--step 10"),
    ("0.1TB/s", "'0.1TB/s' is not a number (a finite number from 0.0001 to 50); the step is a percent of each fact, "
                "not an amount in a unit: the facts audited are in different units (--step 10 moves each 10 %)"),
    ("60", "60 is out of range (a finite number from 0.0001 to 50)"),
    ("-0", "0 is out of range (a finite number from 0.0001 to 50)"),
])
def test_6_audit_step_refusals_say_what_is_accepted(step: str, line: str) -> None:
    out = invoke("audit", "r1-qwen7b-h200", f"--step={step}")
    assert (out.exit_code, out.stdout) == (2, "")
    # before (-10): "-10 is out of range (a finite number from 0.0001 to 50)" and no more
    assert out.stderr == f"passprice: error: Invalid value for '--step': {line} (see 'cli audit --help')\n"


# --- 7. a retrieval date that cannot be established is said so, not guessed -----------------------------------------

@pytest.mark.parametrize("source", ["nvidia-h200-datasheet", "nvidia-hopper-whitepaper",
                                    "deepseek-v3-technical-report", "gpu-container-handbook-routing-derisk"])
def test_7_an_unknown_retrieval_date_is_explained_in_the_note(source: str) -> None:
    text = (embedded_root().sources / f"{source}.toml").read_text(encoding="utf-8")
    assert '\nretrieved = "unknown"\n' in text
    (note,) = re.findall(r'(?m)^note = "(.*)"$', text)
    assert "Retrieved: unknown, not guessed (tests/test_leftovers_31.py): " in note
    assert "git holds none" in note
    out = invoke("audit", "--source", source)
    assert out.exit_code == 0, out.output


# --- 8. the review workflow labels the side it compares -------------------------------------------------------------

def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_8_the_workflow_reviews_head_and_the_comment_labels_it_head(tmp_path: Path) -> None:
    text = workflow("python -m pip install .")
    (command,) = [line.strip() for line in text.splitlines() if '/bin/passprice" diff ' in line]
    # before: `diff "refs/remotes/origin/$BASE_REF" --format comment`, its head side the work tree
    assert command == ('"$RUNNER_TEMP/reviewer/bin/passprice" diff "refs/remotes/origin/$BASE_REF" HEAD --format '
                       'comment \\')
    assert (REPO / ".github/workflows/facts.yml").read_text(encoding="utf-8") == text
    repo = tmp_path / "registry"
    repo.mkdir()
    for folder in ("facts", "registry", "schema", "sources"):
        shutil.copytree(REPO / folder, repo / folder)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "registry")
    sha = _git(repo, "rev-parse", "HEAD")[:12]
    links = ["--format", "comment", "--repository-url", "https://github.com/acme/registry", "--ref", "abc"]
    head = invoke("diff", "main", "HEAD", *links, root=repo)
    assert head.exit_code == 0, head.output
    assert head.stdout.splitlines()[1] == (f"✅ **passprice diff** `main ({sha})` → `HEAD ({sha})`: no changes to "
                                           "facts, registry, locks or the pricing model")
    tree = invoke("diff", "main", *links, root=repo)  # what the workflow ran before: the work tree
    assert tree.stdout.splitlines()[1].startswith(f"✅ **passprice diff** `main ({sha})` → `work tree`: ")


# --- 9. an elasticity through the facts derived from the fact -------------------------------------------------------

MTP = "qwen35-27b-h200-mtp"


def test_9_the_audit_gives_the_elasticity_with_derived_facts_re_derived(tmp_path: Path) -> None:
    data = json.loads(invoke("audit", MTP, "--json").stdout)
    facts = {f["path"]: f for f in data["facts"]}
    assert facts["memory.bandwidth"]["derived_by"] == ["streams.read", "streams.rewrite", "streams.append"]
    assert facts["draft.acceptance.1"]["derived_by"] == ["draft.acceptance.2"]
    assert facts["streams.read"]["derived_by"] == [] and facts["streams.read"]["elasticity_rederived"] is None
    # the bandwidth alone moves the price 1:1; re-derived, the stream shares are BabelStream's rates over it, so the
    # bytes a second and the price do not move
    assert facts["memory.bandwidth"]["elasticity"] == pytest.approx(1.0, abs=1e-9)
    assert facts["memory.bandwidth"]["elasticity_rederived"] == pytest.approx(0.0, abs=1e-9)
    # acceptance.2 = acceptance.1 - 0.1: with acceptance.1 1 % higher (0.8585), acceptance.2 is 0.7585. Priced by
    # hand on a copy of the registry holding those two figures:
    root = copy_root(tmp_path)
    method = root / "facts/drafts/qwen35-mtp.toml"
    text = method.read_text(encoding="utf-8")
    text = text.replace("[acceptance.1]\nvalue = 0.85\n", "[acceptance.1]\nvalue = 0.8585\n", 1)
    text = text.replace("[acceptance.2]\nvalue = 0.75\n", "[acceptance.2]\nvalue = 0.7585\n", 1)
    method.write_text(text, encoding="utf-8")
    base = json.loads(invoke("price", MTP, "--json").stdout)["tokens_per_s"]
    moved = json.loads(invoke("price", MTP, "--json", root=root).stdout)["tokens_per_s"]
    by_hand = (moved / base - 1.0) / 0.01
    assert facts["draft.acceptance.1"]["elasticity_rederived"] == pytest.approx(by_hand, rel=1e-9)
    assert round(by_hand, 3) == 0.891 and round(facts["draft.acceptance.1"]["elasticity"], 3) == 0.598
    line = next(x for x in invoke("audit", MTP).stdout.splitlines() if "inputs of other rows'" in x)
    assert "memory.bandwidth (of streams.read, streams.rewrite, streams.append) +0.000 re-derived; " in line
    assert "draft.acceptance.1 (of draft.acceptance.2) +0.891 re-derived — " in line

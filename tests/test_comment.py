"""The sticky pull-request comment: its body starts with the marker the workflow finds it by, shows each changed
fact's new citation and note on their own lines with a link to the changed lines, each broken floor with the
offending fact's elasticity ("the price does not depend on this fact" when it is 0), and each lock linked to its
file; the workflow that posts it is the one `passprice init` writes, and actionlint finds nothing in it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from passprice.comment import MARKER, Links, comment_body, fact_lines
from passprice.errors import InputError
from passprice.registry import Root
from passprice.review import diff, diff_text
from passprice.scaffold import workflow
from test_diff import (
    CARD,
    CARD_FILE,
    LOCK,
    LOCK_FILE,
    MTP,
    MTP_FILE,
    Repo,
    cli_run,
    commit_all,
    edit_fact,
    git,
    make_repo,
)

REPO = Path(__file__).resolve().parent.parent
URL = "https://github.com/acme/registry"
NOTE = "basis: the Mul kernel's share less 4 %, no measurement"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """main: the locks (the hybrid's streams.rewrite floored at measured); pr: bandwidth raised, then streams.rewrite
    estimated, with a note."""
    made = make_repo(tmp_path_factory.mktemp("comment") / "registry")
    git(made.path, "checkout", "-q", "pr")
    edit_fact(made.path, "streams.rewrite", value=0.8, unit="1", provenance="estimated",
              source="azure-ai-benchmarking-guide",
              locator="Engineering estimate for the review test: 0.96 x the BabelStream Mul share", note=NOTE)
    commit_all(made.path, "a note")
    return made


def test_fact_lines_find_a_facts_table() -> None:
    text = (REPO / CARD_FILE).read_text(encoding="utf-8")
    first, last = fact_lines(text, "memory.bandwidth") or (0, 0)
    lines = text.splitlines()
    assert lines[first - 1] == "[memory.bandwidth]"
    assert lines[last - 1].startswith(("source", "locator", "note", "value", "unit", "provenance", "derivation"))
    assert all(not line.startswith("[") for line in lines[first:last])
    assert lines[last].strip() == "" or lines[last].startswith(("[", "#"))
    assert fact_lines(text, "memory.bandwidthx") is None and fact_lines(text, "no.such") is None
    assert fact_lines("[a]\nvalue = 1\n\n# x\n[b]\nvalue = 2\n", "a") == (1, 2)
    assert fact_lines("[ a . b ]  # c\nvalue = 1\n", "a.b") == (1, 2)


def test_links() -> None:
    links = Links.of(URL + "/", "0123abc")
    assert links is not None and links.repository == URL
    assert links.blob("locks/x.lock.toml") == f"{URL}/blob/0123abc/locks/x.lock.toml"
    assert links.blob("facts/cards/h.toml", (3, 7)) == f"{URL}/blob/0123abc/facts/cards/h.toml#L3-L7"
    assert links.blob("a b.toml", (4, 4)) == f"{URL}/blob/0123abc/a%20b.toml#L4"
    assert Links.of(None, "x") is None and Links.of(URL, "") is None
    for address in ("git@github.com:acme/registry", "http://github.com/acme/registry",
                    "https://github.com/o/r)[x](https://evil.example", "https://github.com/o/r?x=1",
                    'https://github.com/o/r" onclick="x', "https://github.com"):  # fmt: skip
        with pytest.raises(InputError, match="is not a plain https address of a repository"):
            Links.of(address, "x")
    assert Links.of("https://git.example.org:8443/group/sub.group/my-repo_1", "x") is not None


def _main_of(repo: Repo, path: Path) -> Repo:
    """A clone of the module's repository at ``path``, its branch ``main`` checked out: :func:`make_repo`'s ``main``
    (the module's fixture commits only on ``pr``), for a test that edits its work tree. A clone is a few git
    processes; :func:`make_repo` again was ~2 s of CPU (two locks priced, three facts edited, re-locked, 6 commits)."""
    git(path.parent, "clone", "-q", "--branch", "main", str(repo.path), path.name)
    return attrs.evolve(repo, path=path)


def test_nothing_read_from_a_file_becomes_markup(repo: Repo, tmp_path: Path) -> None:
    # Finding 13: a locator holding a link, an image and bold text, a card file whose name closes a code span and
    # opens a link, and a repository address that closes the link it is put in.
    from markdown_it import MarkdownIt

    made = _main_of(repo, tmp_path / "registry")
    hostile = "[click](https://evil.example) <img src=x> **all locks hold** _x_"
    bandwidth = ("Specifications table, H200 SXM column (a row: its label, "
                 "the H200 SXM figure, the H200 NVL figure): 'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'")
    card = made.path / CARD_FILE
    card.write_text(card.read_text(encoding="utf-8").replace(f'locator = "{bandwidth}"', f'locator = "{hostile}"', 1),
                    encoding="utf-8")  # fmt: skip
    odd = made.path / "facts/cards/x`](https:__evil.example)`.toml"
    shutil.copy(REPO / "facts/cards/mi300x.toml", odd)
    d = diff(Root(made.path), "main")
    body = comment_body(d, Links(URL, "feedbeef"))
    assert "  - **cite (new)**: nvidia-h200-product-page: \\[click\\](https://evil.example) &lt;img src=x&gt; " \
        "\\*\\*all locks hold\\*\\* \\_x\\_" in body.splitlines()
    # The name ends in a backtick: fenced by two, padded by a space CommonMark strips again.
    assert "| `` x`](https:__evil.example)` `` | `memory.capacity` |" in body
    html = MarkdownIt("commonmark").enable("table").render(body)
    assert "<td><code>x`](https:__evil.example)`</code></td>" in html
    links = [line for line in html.split("<a ") if line.startswith("href=")]
    assert links and all(link.startswith(f'href="{URL}/blob/feedbeef/') for link in links)
    assert "<img" not in html and "all locks hold</strong>" not in html and "<em>x</em>" not in html
    assert 'href="https://evil.example' not in html and "evil.example)</a>" not in html
    # The same from the command line: a repository address that would close its link is refused.
    code, out, err = cli_run(["--root", str(made.path), "diff", "main", "--format", "comment",
                              "--repository-url", "https://github.com/o/r)[x](https://evil.example", "--ref", "abc"])
    assert code == 2 and out == ""
    assert err.startswith("passprice: error: --repository-url: 'https://github.com/o/r)[x](https://evil.example' is "
                          "not a plain https address of a repository")


def test_comment_links_each_fact_to_its_lines_when_head_is_a_revision(repo: Repo) -> None:
    # `diff origin/main HEAD --format comment --repository-url … --ref …` linked each fact to its file alone (no
    # `#L` anchor): the lines were looked up in HEAD's folder, which a git revision has none of once read.
    d = diff(Root(repo.path), "main", "pr")
    lines = comment_body(d, Links(URL, "feedbeef")).splitlines()
    text = subprocess.run(["git", "-C", str(repo.path), "show", f"pr:{CARD_FILE}"], capture_output=True, text=True,
                          check=True).stdout
    first, last = fact_lines(text, "streams.rewrite") or (0, 0)
    assert first > 0
    item = next(i for i, line in enumerate(lines) if line.startswith(f"- `{CARD}` `streams.rewrite` (changed) in "))
    assert lines[item].endswith(
        f"[`{CARD_FILE}` lines {first}–{last}]({URL}/blob/feedbeef/{CARD_FILE}#L{first}-L{last})"
    )


def test_comment_body(repo: Repo) -> None:
    # HEAD is the work tree (the pull request's head checked out), as in the workflow.
    d = diff(Root(repo.path), "main")
    body = comment_body(d, Links(URL, "feedbeef"))
    lines = body.splitlines()
    assert lines[0] == MARKER and lines[0].startswith("<!--") and lines[0].endswith("-->")
    assert lines[1].startswith("❌ **passprice diff**")
    # The new citation and the note each on a line of their own, under a link to the changed lines.
    text = (repo.path / CARD_FILE).read_text(encoding="utf-8")
    first, last = fact_lines(text, "streams.rewrite") or (0, 0)
    assert first > 0
    item = next(i for i, line in enumerate(lines) if line.startswith(f"- `{CARD}` `streams.rewrite` (changed) in "))
    assert lines[item].endswith(
        f"[`{CARD_FILE}` lines {first}–{last}]({URL}/blob/feedbeef/{CARD_FILE}#L{first}-L{last})"
    )
    new_cite = "Engineering estimate for the review test: 0.96 x the BabelStream Mul share"
    assert lines[item + 1] == f"  - **cite (new)**: azure-ai-benchmarking-guide: {new_cite}"
    assert lines[item + 2].startswith("  - **cite (was)**: azure-ai-benchmarking-guide: Azure_Results/ND_H200_v5")
    assert lines[item + 3] == f"  - **note**: {NOTE}"
    # The broken floor, with the fact's elasticity: the hybrid rewrites its recurrent state in place every pass, so
    # the rewrite share moves its price a little. (R1-Distill-Qwen-7B keeps no recurrent state: its price does not
    # rest on the share, and its lock has no floor there.)
    lock_row = next(line for line in lines if line.startswith(f"| [`{MTP}`]({URL}/blob/feedbeef/{MTP_FILE}) |"))
    lock = {x.name: x for x in d.locks}[MTP]
    e = lock.elasticities["streams.rewrite"]
    assert e is not None and 0 < e < 1
    assert (
        f"❌ BROKEN: streams.rewrite is estimated, below the floor measured (elasticity {e:+.3f}: +1 % of it moves "
        f"tokens/s {e:+.3f} %)" in lock_row
    )
    assert {x.name: x for x in d.locks}[LOCK].elasticities == {}
    assert f"(elasticity {e:+.3f}: +1 % of it moves" in diff_text(d)
    # Without a repository the comment has no links, and the marker still opens it.
    plain = comment_body(d).splitlines()
    assert plain[0] == MARKER and not any("](" in line for line in plain)


def test_a_fact_the_price_depends_on_shows_its_elasticity(repo: Repo, tmp_path: Path) -> None:
    made = _main_of(repo, tmp_path / "registry")
    # A floor on memory.bandwidth, then that fact weakened: a memory-bound price moves with it one for one.
    from passprice.facts import Provenance
    from passprice.locks import Policy, read_lock, write_lock

    lock = read_lock(made.path / LOCK_FILE)

    floors = Policy(lock.policy.floor, {"memory.bandwidth": Provenance.PUBLISHED})
    write_lock(made.path / LOCK_FILE, attrs.evolve(lock, policy=floors), force=True)
    commit_all(made.path, "floor on memory.bandwidth")
    git(made.path, "checkout", "-q", "-b", "weaker-bandwidth")
    edit_fact(made.path, "memory.bandwidth", value=4.8, unit="TB/s", provenance="estimated",
              source="azure-ai-benchmarking-guide", locator="an estimate for the review test, not the datasheet")
    d = diff(Root(made.path), "main")
    impact = {x.name: x for x in d.locks}[LOCK]
    e = impact.elasticities["memory.bandwidth"]
    assert e is not None and e == pytest.approx(1.0, abs=0.01)
    assert f"(elasticity {e:+.3f}: +1 % of it moves tokens/s {e:+.3f} %)" in impact.floors()


def test_the_command_line(repo: Repo) -> None:
    code, out, err = cli_run(
        ["--root", str(repo.path), "diff", "main", "--format", "comment", "--repository-url", URL, "--ref", "abc"]
    )
    assert code == 1 and "breaks lock" in err
    assert out.splitlines()[0] == MARKER and f"]({URL}/blob/abc/{LOCK_FILE})" in out
    code, out, err = cli_run(["--root", str(repo.path), "diff", "main", "--format", "markdown", "--ref", "abc"])
    assert code == 2 and "give --repository-url and --ref together" in err


def test_the_workflow_is_the_template_and_lints_clean(tmp_path: Path) -> None:
    text = (REPO / ".github/workflows/facts.yml").read_text(encoding="utf-8")
    assert text == workflow("python -m pip install .")
    assert "--format comment" in text and "GITHUB_STEP_SUMMARY" in text and "--method PATCH" in text
    beside = Path(sys.executable).parent / "actionlint"
    actionlint = str(beside) if beside.exists() else shutil.which("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (the test extras install it)")
    registry = tmp_path / ".github/workflows"
    registry.mkdir(parents=True)
    (registry / "facts.yml").write_text(workflow("python -m pip install -r requirements.txt"), encoding="utf-8")
    for cwd in (REPO, tmp_path):
        files = sorted(str(p) for p in (cwd / ".github/workflows").glob("*.yml"))
        done = subprocess.run([actionlint, "-no-color", *files], cwd=cwd, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr

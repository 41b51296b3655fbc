"""Session 18's leftovers closed by the lead: HEAD's own code run during a review could leave a process running past
it (a child it forked and did not wait for), and a child holding the answer pipe open held the review for the whole
limit."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from passprice import sidecode


def _gone(pid: int, within_s: float = 20.0) -> bool:
    """Whether process ``pid`` has ended (gone, or a zombie waiting for whoever adopted it) within ``within_s``."""
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def _forking_child(tmp_path: Path, close_pipes: bool) -> str:
    """A side's code that answers, and first forks a child that runs on for 60 s (holding the answer and error
    pipes, or with them closed, as a daemon would), writing its pid to ``tmp_path/pid``."""
    closing = "os.close(0); os.close(1); os.close(2)\n    " if close_pipes else ""
    return (
        "import os, sys, time\n"
        "sys.stdin.read()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        f"    {closing}time.sleep(60)\n"
        "    os._exit(0)\n"
        f"open({str(tmp_path / 'pid')!r}, 'w').write(str(pid))\n"
        "sys.stdout.write('{\"results\": {}}')\n"
    )


def test_a_child_holding_the_answer_pipe_neither_holds_the_review_nor_outlives_it(tmp_path: Path) -> None:
    """Before: the review read the pipes until the child let go of them, 300 s (TIMEOUT_S), then said "took longer
    than 300 s" although the code had answered; the child ran on."""
    started = time.monotonic()
    status, out, err, why = sidecode._run([sys.executable, "-c", _forking_child(tmp_path, False)], b"{}",
                                          Path.cwd(), dict(os.environ))
    assert (status, why, out) == (0, "", b'{"results": {}}'), err
    assert time.monotonic() - started < 30  # not the 60 s the child sleeps, nor TIMEOUT_S
    assert _gone(int((tmp_path / "pid").read_text()))


def test_a_daemon_child_does_not_outlive_the_review(tmp_path: Path) -> None:
    """A child that closed its pipes (a daemon that did not make a session of its own) ran on after the review."""
    status, out, _, why = sidecode._run([sys.executable, "-c", _forking_child(tmp_path, True)], b"{}", Path.cwd(),
                                        dict(os.environ))
    assert (status, why, out) == (0, "", b'{"results": {}}')
    assert _gone(int((tmp_path / "pid").read_text()))


# --- simulate's fitted-span flag (session 17 left it untested: no shipped serving is priced under a shipped stack) --

_SHORT = """#:schema ../../schema/serving.schema.json
description = "Gemma 3 270M Q4_K_M on one H100 SXM, short chats only"
checkpoint = "gemma3-270m-q4_k_m"
card = "h100_sxm5_80gb"
batch = 1

[[contexts]]
share = 1.0
position = 1024
limit = 4096
"""
_SIM = ("simulate", "gemma3-short", "--synthetic", "3", "--stack", "llamacpp-cuda-2405", "--chunk", "1",
        "--max-batch", "1")


def test_simulate_under_a_stack_flags_a_decode_pass_outside_the_fitted_span(tmp_path: Path) -> None:
    """gemma3 270M's decode pass on an H100 under llamacpp-cuda-2405 is expected at 0.04266 × its limit, far below the
    0.3425 … 0.8519 its 111 runs (8B and 70B models) measured: ``simulate`` says so, in text and in ``--json``, as
    ``price`` does."""
    import json

    from cli_helpers import copy_root, invoke

    root = copy_root(tmp_path)
    (root / "registry" / "servings" / "gemma3-short.toml").write_text(_SHORT, encoding="utf-8")
    text = invoke(*_SIM, root=root)
    assert text.exit_code == 0, text.output[-2000:]
    span = ("its 111 fitted runs measured 0.3425 … 0.8519 × their limit (the limit 1.17 … 2.92 × measured); this "
            "price's 0.04266 (the limit 23.4 × expected) lies outside: an extrapolation of the fit")
    assert f"  fitted span {span} (the serving's decode pass, batch 1)" in text.stdout
    assert f"  fitted span   {span}" in invoke("price", "gemma3-short", "--stack", "llamacpp-cuda-2405",
                                               root=root).stdout
    data = invoke(*_SIM, "--json", root=root)
    assert data.exit_code == 0
    reach = json.loads(data.stdout)["stack_span"]
    assert (reach["runs"], reach["inside"], reach["batch"]) == (111, False, None)
    assert (round(reach["low"], 4), round(reach["high"], 4), round(reach["ratio"], 5)) == (0.3425, 0.8519, 0.04266)
    assert "outside the 0.3425 … 0.8519 × (limit 1.17 … 2.92 × measured) its 111 fitted runs measured" in data.stderr


# --- the review counts an added record's facts as added (walkthrough 21's leftover) --------------------------------


def test_an_added_routing_record_s_facts_are_counted_as_added_not_changed(tmp_path: Path) -> None:
    """Before: an added routing record (two facts) read "2 facts changed in 1 file"; a card fact edited beside it
    read "3 facts changed in 2 files"."""
    import json

    from cli_helpers import invoke
    from test_newcomer_21 import ROUTING, SOURCE, _repo

    root = _repo(tmp_path)
    (root / "sources" / "mixtral-of-experts-paper.toml").write_text(SOURCE, encoding="utf-8")
    (root / "facts" / "routing" / "mixtral-8x7b-pile.toml").write_text(ROUTING, encoding="utf-8")
    out = json.loads(invoke("diff", "main", "--json", root=root).stdout)
    # Each added routing fact cites the paper's record the same change adds: asked as a changed fact is (left26b).
    assert out["summary"].startswith("2 routing facts added in 1 new file, 2 to verify in their sources; 1 source "
                                     "added; no lock affected"), out["summary"]
    card = root / "facts" / "cards" / "a40.toml"
    text = card.read_text(encoding="utf-8")
    assert 'locator = "' in text
    card.write_text(text.replace('locator = "', 'locator = "page 2; ', 1), encoding="utf-8")
    out = json.loads(invoke("diff", "main", "--json", root=root).stdout)
    assert out["summary"].startswith("1 fact changed in 1 file, 1 to verify in its source; 2 routing facts added in 1 "
                                     "new file, 2 to verify in their sources; 1 source added; "), out["summary"]


# --- attack round 36's leftovers: a vendor written in another case, a thousand runs counted ----------------------


def test_a_card_vendor_in_another_case_is_the_same_vendor(tmp_path: Path) -> None:
    """The H200's ``vendor = "Nvidia"`` under llamacpp-cuda-2405 (fitted on cards of vendor "NVIDIA") read as a card of
    another vendor: "every card its runs measured has vendor NVIDIA, h200_sxm_141gb has vendor Nvidia"."""
    from cli_helpers import copy_root, invoke

    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text(encoding="utf-8")
    assert 'vendor = "NVIDIA"' in text
    card.write_text(text.replace('vendor = "NVIDIA"', 'vendor = "Nvidia"'), encoding="utf-8")
    out = invoke("price", "qwen3-30b-a3b-h200", "--batch", "1", "--stack", "llamacpp-cuda-2405", "--no-lock",
                 root=root)  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "extrapolates across cards" in out.stderr and "never ran on such a card" not in out.stderr
    amd = invoke("price", "qwen3-30b-a3b-h200", "--card", "mi300x", "--batch", "1", "--stack", "llamacpp-cuda-2405",
                 "--no-lock", root=root)  # fmt: skip
    assert "mi300x has vendor AMD: the stack's kernels never ran on such a card" in amd.stderr


def test_an_added_measurement_file_of_a_thousand_runs_counts_them_with_a_separator(tmp_path: Path) -> None:
    """Attack round 36: "1000 measured runs", where every other count the review shows reads 1,000."""
    import json
    import shutil

    from cli_helpers import REPO, invoke
    from test_diff import commit_all, git
    from test_hostile_36 import RUN

    path = tmp_path / "registry"
    path.mkdir()
    for folder in ("facts", "registry", "locks", "sources", "schema"):
        shutil.copytree(REPO / folder, path / folder)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "base")
    text = RUN.format(routing="qwen3-30b-a3b-measured")
    body = text[text.index("[[run]]"):]
    text += "".join(body.replace("a36.qwen3moe.tg128", f"a36.r{i}") for i in range(999))
    (path / "registry" / "measurements" / "a36.toml").write_text(text, encoding="utf-8")
    review = invoke("diff", "main", "--json", root=path)
    described = json.loads(review.stdout)["added_records"]["registry/measurements/a36.toml"]
    assert described.startswith("1,000 measured runs (stack llamacpp-cuda-2507 "), described
    # Slip round 34: its runs are asked as added runs too (each locator quotes no figure), counted alike.
    assert "; and 995 more runs (`passprice validate` prices each); 1,000 measured runs to verify in their sources: " \
        "a36.qwen3moe.tg128 added: its locator quotes no figure: " in described, described
    assert described.endswith("; and 995 more"), described

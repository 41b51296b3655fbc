"""Findings of the twenty-ninth walkthrough: a performance researcher who read "gpt-oss decodes at N tokens/s on an
H100" prices it with passprice from README.md alone, traces each figure to its source, reproduces an older lock's
price from its commit, reviews a fact and routing change as a pull request, and compares the price with a cited
public measurement."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import LISTED_MODEL, REPO, copy_root, invoke
from test_slip_34 import renderings  # one in-process review rendered per format

GPT_OSS_H100 = ("--checkpoint", "gpt-oss-20b-mxfp4", "--card", "h100_sxm5_80gb", "--batch", "1", "--routing",
                "uniform")


def test_gpt_oss_on_an_h100_by_hand() -> None:
    # The blog's pairing, which no serving registers: one sequence, uniform routing (its only record for 32 experts).
    # By hand, from the checkpoint's bytes and the H100 SXM5's facts (audit lists each with its citation):
    #   weights 2,574,705,396 B (the 4 of 32 experts a token reads: 1,272,360,960 B = 4/32 of 10,178,887,680 B,
    #   plus every dense tensor) / (3.35 TB/s × streams.read 0.9493) = 809.616 µs
    #   + one sequence's 53,501,952 B / (3.35 TB/s × streams.append 0.8866)           =  18.013 µs
    #   = 827.630 µs a pass, 1 / 827.630 µs = 1,208.27 tokens/s.
    # (Session 39: the 12 windowed layers read 127 of their 128-position window, the row's own written besides, as
    # llama.cpp's mask attends 128: 12 × 2,048 B less than session 38's 53,526,528 B and 1,208.26 tokens/s.)
    weights = 2_574_705_396 / (3.35e12 * 0.9493)
    sequence = 53_501_952 / (3.35e12 * 0.8866)
    assert round(weights * 1e6, 3) == 809.616 and round(sequence * 1e6, 3) == 18.013
    assert 10_178_887_680 * 4 // 32 == 1_272_360_960
    result = invoke("price", *GPT_OSS_H100, "--json")
    assert result.exit_code == 0, result.output
    price = json.loads(result.stdout)
    assert price["weight_bytes"] == 2_574_705_396 and price["sequence_bytes"] == 53_501_952
    assert price["routing"]["bytes"] == 1_272_360_960 and price["routing"]["experts_held_bytes"] == 10_178_887_680
    assert price["memory_s"] == weights + sequence
    assert round(price["tokens_per_s"], 2) == 1208.27
    text = invoke("price", *GPT_OSS_H100).stdout
    assert "  tokens/s      1,208.3  (TPOT 827.6 µs per sequence)\n" in text


def test_the_audit_says_what_refused_and_minus_one_percent_mean() -> None:
    # Was: uniform routing's routing.hot_share read "refused" and routing.hot_experts "+0.000 (−1 %)" in the
    # elasticity column, under a legend that spoke of a +1 % change only; `passprice explain refused` defined a
    # refusal of the price (exit status 1), while the audit exits 0. Now the lines under the table say both, naming
    # the refusal each step gave.
    result = invoke("audit", *GPT_OSS_H100)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "*!  routing.hot_experts                      1  assumed     +0.000 (−1 %)" in lines
    assert "*!  routing.hot_share                        1  assumed           refused" in lines
    legend = lines.index("  elasticity: % change of tokens/s for a +1 % change of the fact, by re-pricing")
    assert lines[legend + 1:legend + 3] == [
        "  (−1 %): measured with the fact 1 % lower, since 1 % higher is refused: routing.hot_experts (BadRouting)",
        "  refused: not measured, since 1 % higher and 1 % lower are both refused: routing.hot_share (BadRouting); "
        "the price itself is not refused and rests on the fact as written",
    ]
    out = json.loads(invoke("audit", *GPT_OSS_H100, "--json").stdout)
    rows = {r["path"]: r for r in out["facts"]}
    assert rows["routing.hot_share"]["elasticity"] is None
    assert rows["routing.hot_share"]["refused"] == ["BadRouting", "BadRouting"]
    assert rows["routing.hot_experts"]["refused"] == ["BadRouting"] and rows["routing.hot_experts"]["step"] == -0.01
    assert rows["memory.bandwidth"]["refused"] == []
    markdown = invoke("audit", *GPT_OSS_H100, "--format", "markdown").stdout
    assert ("Elasticity: % change of tokens/s for a +1 % change of the fact, by re-pricing.\n"
            "- (−1 %): measured with the fact 1 % lower, since 1 % higher is refused: routing.hot_experts "
            "(BadRouting)\n- refused: not measured") in markdown
    explained = invoke("explain", "refused").stdout
    assert "(`refused` in an audit's elasticity column is no refusal of the price" in explained
    assert "it shows `refused`, no elasticity" in invoke("explain", "elasticity").stdout


def test_a_dense_audit_has_no_such_lines() -> None:
    lines = invoke("audit", "r1-qwen7b-h200").stdout.splitlines()
    legend = lines.index("  elasticity: % change of tokens/s for a +1 % change of the fact, by re-pricing")
    assert lines[legend + 1].startswith("  floor: ") or lines[legend + 1].startswith("  by hand: ")
    assert not any("since 1 % higher" in line for line in lines)


def test_the_readme_quotes_the_gpt_oss_audit() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`-0.634 (−1 %)` for `gpt-oss-20b-h200`" in readme
    lines = invoke("audit", "gpt-oss-20b-h200").stdout.splitlines()
    assert "*!  routing.hot_experts                      1  assumed     -0.634 (−1 %)" in lines


def _blog_run(root: Path, source_line: str) -> Path:
    """A measurement file of one gpt-oss run on the H100 SXM5, as a blog post would give it."""
    path = root / "registry" / "measurements" / "blog.toml"
    path.write_text(
        "#:schema ../../schema/measurement.schema.json\n"
        '[source]\nname = "a blog\'s gpt-oss figure"\nsource = "my-blog"\n\n'
        '[[run]]\nid = "blog.h100.gptoss20b.tg128"\nstack = "llamacpp-cuda-2508"\ncard = "h100_sxm5_80gb"\n'
        'checkpoint = "gpt-oss-20b-mxfp4"\nbatch = 1\npositions = [0, 128]\ntokens_per_s = 250.0\n'
        'routing = "uniform"\n'
        "locator = \"paragraph 3: 'gpt-oss-20b decodes at 250 tokens/s on an H100'\"\n" + source_line,
        encoding="utf-8",
    )
    return path


def test_a_run_citing_no_record_names_the_key_and_the_file_to_write(tmp_path: Path) -> None:
    # Was: "registry/measurements/blog.toml: no source 'my-blog' (sources has no such record): a run cites a source
    # record (sources/ID.toml)": no key, so which of the file's sources was meant had to be searched for.
    root = copy_root(tmp_path)
    shutil.copytree(REPO / "schema", root / "schema")
    _blog_run(root, "")
    validated = invoke("validate", root=root)
    assert validated.exit_code == 2
    assert validated.stderr.splitlines() == [
        # each path relative to the registry, as check names it (leftovers 28c)
        "passprice: error: registry/measurements/blog.toml: source.source: no source 'my-blog' (sources "
        "has no such record): a run cites a source record (sources/ID.toml): write sources/my-blog.toml, or cite a "
        "record `passprice sources` lists"
    ]
    checked = invoke("check", root=root)
    assert checked.exit_code == 2
    assert ("registry/measurements/blog.toml: source.source: no source 'my-blog' (sources/ has no such record)"
            in checked.stderr)
    # A run's own source is its own key.
    _blog_run(root, 'source = "my-other-blog"\n')
    checked = invoke("check", root=root)
    assert ("registry/measurements/blog.toml: run.0.source: no source 'my-other-blog' (sources/ has no such record): "
            "a run cites a source record (sources/ID.toml): write sources/my-other-blog.toml, or cite a record "
            "`passprice sources` lists") in checked.stderr


def _bandwidth_and_routing(tmp_path: Path) -> tuple[Path, Path]:
    """BASE: a copy of the checkout's registry; HEAD: the H200's bandwidth corrected to 4.89 TB/s (its stream shares
    recomputed) and Qwen3-30B-A3B's measured hot_share read as 0.85, the walkthrough's pull request."""
    base = copy_root(tmp_path / "base")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    edit = invoke("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "4.89", "--unit", "TB/s",
                  "--provenance", "published", "--source", "nvidia-h200-datasheet", "--locator",
                  "a what-if: corrected bandwidth", root=head)
    assert edit.exit_code == 0, edit.output
    assert invoke("fact", "recompute", "h200_sxm_141gb", root=head).exit_code == 0
    record = head / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    assert record.read_text().count("\nvalue = 0.9\n") == 1
    record.write_text(record.read_text().replace("\nvalue = 0.9\n", "\nvalue = 0.85\n"))
    return base, head


def test_the_review_says_which_changed_fact_moved_a_locked_price(tmp_path: Path) -> None:
    # Was: the lock's row read "memory.bandwidth, streams.read, streams.append, routing.hot_share" and "-4.889 %",
    # and only `passprice reproduce` on HEAD said the routing record moved it (-4.894 %), the bandwidth the other way.
    # By hand, routing.hot_share 0.9 → 0.85 alone: D(64) = 58 · (1 − (1 − 8 · hs / 58)^64) + 70 · (1 − (1 − 8 · (1 −
    # hs) / 70)^64) experts a layer read: 94.444 → 104.834 of 128; weight_bytes = 822,597,632 B (dense) + D / 128 ×
    # 17,553,162,240 B (every expert) = 13,774,102,215 → 15,198,879,762 B; the pass 13,774,102,215 B / (4.8 TB/s ×
    # 0.9333) + 64 × 201,424,896 B / (4.8 TB/s × 0.8646) = 6.181 ms → 6.499 ms; tokens/s 10,354.4 → 9,847.7, -4.894 %.
    def experts(hs: float) -> float:
        return 58 * (1 - (1 - 8 * hs / 58) ** 64) + 70 * (1 - (1 - 8 * (1 - hs) / 70) ** 64)

    def tokens(hs: float) -> float:
        weights = 822_597_632 + experts(hs) / 128 * 17_553_162_240
        return 64 / (weights / (4.8e12 * 0.9333) + 64 * 201_424_896 / (4.8e12 * 0.8646))

    assert (round(experts(0.9), 3), round(experts(0.85), 3)) == (94.444, 104.834)
    assert (round(tokens(0.9), 1), round(tokens(0.85), 1)) == (10354.4, 9847.7)
    assert f"{100 * (tokens(0.85) / tokens(0.9) - 1):+.4g}" == "-4.894"
    base, head = _bandwidth_and_routing(tmp_path)
    status, (text, shown_md, as_json) = renderings(head, "text", "markdown", "json", base=str(base), head=str(head))
    assert status == 1, text
    lines = text.splitlines()
    row = lines.index("  qwen3-30b-a3b-h200 (locks/qwen3-30b-a3b-h200.lock.toml, card h200_sxm_141gb, price): price "
                      "moved, lock not updated (weight_bytes, the weights' bytes a pass reads)")
    # Walkthrough 49: the bandwidth and the shares recomputed from it are one change (tests/test_walk46.py prices it
    # by hand, +0.00496 %), and the row names the record and the citation it now rests on (`cites`).
    assert lines[row + 1:row + 3] == [
        "    changed   memory.bandwidth, streams.read, streams.append, routing.hot_share (qwen3-30b-a3b-measured)",
        "    cites     memory.bandwidth: nvidia-h200-datasheet, a what-if: corrected bandwidth; streams.read = dot / "
        "bandwidth [dot 4.48 TB/s: azure-ai-benchmarking-guide, Azure_Results/ND_H200_v5_results.md, HBM Bandwidth "
        "table… '| Dot   | 4.48              |'…; bandwidth 4.89 TB/s: fact memory.bandwidth]; streams.append = "
        "triad / bandwidth [triad 4.15 TB/s: azure-ai-benchmarking-guide, Azure_Results/ND_H200_v5_results.md, HBM "
        "Bandwidth table… '| Triad | 4.15              |'…; bandwidth 4.89 TB/s: fact memory.bandwidth]; "
        "routing.hot_share (qwen3-30b-a3b-measured): value changed, citation unchanged: "
        "gpu-container-handbook-routing-derisk, the definition of hot_frac_for_coverage: the fraction "
        "of a layer's experts that capture 90% of its…  (as HEAD cites them; whole under the file above)"]
    assert lines[row + 4:row + 6] == [
        "    tokens/s  10,354.4 → 9,848.2  (-4.889 %)",
        "    alone     memory.bandwidth with the 2 facts derived from it (streams.read, streams.append): tokens/s "
        "+0.00496 %; routing.hot_share: tokens/s -4.894 %  (each changed fact alone: the lock's pinned inputs with "
        "only it as HEAD has it, or it with the facts derived from it)",
    ]
    markdown = shown_md.splitlines()
    assert ("- `qwen3-30b-a3b-h200`: each changed fact alone (the lock's pinned inputs with only it as HEAD has it, or "
            "it with the facts derived from it): memory.bandwidth with the 2 facts derived from it (streams.read, "
            "streams.append): tokens/s +0.00496 %; routing.hot_share: tokens/s -4.894 %") in markdown
    out = json.loads(as_json)
    locks = {lock["name"]: lock for lock in out["locks"]}
    assert locks["qwen3-30b-a3b-h200"]["alone"][-1] == {"path": "routing.hot_share", "move": "tokens/s -4.894 %"}
    # The bandwidth corrected with its shares recomputed nearly cancels on a memory-bound price: each alone says so.
    assert [a["path"] for a in locks["r1-qwen7b-h200"]["alone"]] == ["memory.bandwidth", "streams.read",
                                                                     "streams.append"]
    assert locks["r1-qwen7b-h200"]["alone"][0]["move"] == "tokens/s +1.875 %"


def test_a_lock_moved_by_one_changed_fact_has_no_alone_line(tmp_path: Path) -> None:
    base = copy_root(tmp_path / "base")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    record = head / "facts" / "routing" / "qwen3-30b-a3b-measured.toml"
    record.write_text(record.read_text().replace("\nvalue = 0.9\n", "\nvalue = 0.85\n"))
    out = json.loads(invoke("diff", str(base), str(head), "--json", root=head).stdout)
    [lock] = [lock for lock in out["locks"] if lock["name"] == "qwen3-30b-a3b-h200"]
    assert lock["changed"] == ["routing.hot_share"] and lock["alone"] == []
    assert lock["relative_change"] is not None and f"{100 * lock['relative_change']:+.4g}" == "-4.894"


def test_validate_says_how_a_registered_stack_prices_a_run_of_another(tmp_path: Path) -> None:
    # Was: the blog's run read "limit 1,233.5, 4.93 × measured, stack not registered", and nothing said that the
    # registered llama.cpp stack's expected price of it was one command away, nor at which positions it was priced.
    root = copy_root(tmp_path)
    shutil.copytree(REPO / "schema", root / "schema")
    _blog_run(root, "")
    (root / "sources" / "my-blog.toml").write_text(
        '#:schema ../schema/source.schema.json\n[source]\ntitle = "A blog post on gpt-oss speed"\nkind = "blog-post"\n'
        'publisher = "someone"\nurl = "https://example.com/gpt-oss-h100"\ndate = "2025-08"\nretrieved = "2026-12-04"\n'
        'read = "the figure in paragraph 3"\n', encoding="utf-8")
    result = invoke("validate", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    [row] = [line for line in lines if line.startswith("blog.h100.gptoss20b.tg128 ")]
    assert row.split() == ["blog.h100.gptoss20b.tg128", "1", "0-128", "250", "1,233.5", "4.93", "memory", "–",
                           "stack", "not", "registered"]
    command = ("passprice price --checkpoint gpt-oss-20b-mxfp4 --card h100_sxm5_80gb --batch 1 --limit 128 "
               "--position 64 --routing uniform --stack S")
    assert lines[-1] == (
        "  stack not registered: 68 runs of llamacpp-cuda-2312, llamacpp-cuda-2401, llamacpp-cuda-2404, "
        "llamacpp-cuda-2404-graphs, llamacpp-cuda-2508, llamacpp-cuda-2508-pr15525, llamacpp-cuda-2510, "
        "llamacpp-cuda-2511 and 3 more priced as the card's "
        "limit only; what a "
        "registered stack expects of "
        f"one is its serving priced under it, e.g. blog.h100.gptoss20b.tg128: `{command}` (--limit its last position, "
        "--position the mean of its positions; stacks registered: llamacpp-cuda-2405, lmdeploy-turbomind-2312)"
    )
    # The command it gives, under the registered llama.cpp stack: 223.1 tokens/s expected against 250 measured.
    # By hand: fixed 24 layers × 96.63 µs = 2.31912 ms; the scale term binds at the stack's share: 112,654,080
    # cycles / (33.5 Tcycle/s × 0.002051) = 1.63959 ms; plus terms.serial 0.5 × the other terms.
    args = [*command.split()[1:-1], "llamacpp-cuda-2405", "--json"]
    out = json.loads(invoke(*args, root=root).stdout)
    expected = out["expected"]
    assert out["fixed_s"] == 24 * 96.63e-6 and round(out["fixed_s"] * 1e3, 5) == 2.31912
    assert out["scale_cycles"] == 112_654_080
    assert round(expected["scale_s"] * 1e3, 5) == round(112_654_080 / (33.5e12 * 0.002051) * 1e3, 5) == 1.63959
    others = expected["memory_s"] + expected["array_s"] + expected["vector_s"]
    assert abs(expected["pass_s"] - (out["fixed_s"] + expected["scale_s"] + 0.5 * others)) < 1e-12
    assert round(expected["tokens_per_s"], 1) == 223.1 and round(out["tokens_per_s"], 1) == 1233.5
    # The gap to the blog's 250: -10.8 %, on a fit the price says is extrapolated (an MoE, a card its runs never saw).
    assert f"{100 * (expected['tokens_per_s'] / 250 - 1):+.1f}" == "-10.8"


def test_validate_of_registered_stacks_only_has_no_such_line() -> None:
    lines = invoke("validate", "--stack", "llamacpp-cuda-2405").stdout.splitlines()
    assert not any(line.startswith("  stack not registered") for line in lines)


def _redigested(source: Path, out: Path, digest: str) -> None:
    """``source``'s lock with ``[lock] pricing_model = digest`` and its own digest computed again: a lock another
    code wrote."""
    import tomlkit

    from passprice.digests import sha256
    from passprice.locks import _PREAMBLE, _canonical, lock_document, read_lock

    body = lock_document(read_lock(source))
    body["lock"]["pricing_model"] = digest
    del body["lock"]["digest"]
    body["lock"]["digest"] = "sha256:" + sha256(_canonical(body).encode("utf-8")).hexdigest()
    out.write_text(_PREAMBLE + tomlkit.dumps(body), encoding="utf-8")


def test_reproduce_names_the_commit_whose_code_wrote_an_older_lock(tmp_path: Path) -> None:
    # Was: a lock written out of an older commit (`git show C:LOCK > old.lock.toml`) read "pricing model changed
    # (d229a791916f → …)", and the only way to that code was a checkout of each candidate commit. The oldest commit
    # whose locks record the digest is its code (a lock is committed with the code that ran it).
    import subprocess

    root = copy_root(tmp_path)
    # A checkout of passprice itself, whose commits hold its code (a registry of one's own names its requirements.txt
    # line instead: test_newcomer_33).
    (root / "src" / "passprice").mkdir(parents=True)
    (root / "src" / "passprice" / "pins.py").write_text('"""The code of the commit."""\n', encoding="utf-8")
    old = LISTED_MODEL
    lock = root / "locks" / "qwen3-30b-a3b-h200.lock.toml"
    _redigested(lock, lock, old)

    def git(*args: str) -> str:
        env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@t", "GIT_COMMITTER_DATE": "2026-12-03T12:00:00+00:00",
               "GIT_AUTHOR_DATE": "2026-12-03T12:00:00+00:00", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
        return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "the lock, written by the old code")
    wrote = git("rev-parse", "HEAD")[:12]
    handed = tmp_path / "old.lock.toml"
    handed.write_bytes(lock.read_bytes())
    _redigested(handed, lock, "sha256:" + "cd" * 32)  # re-locked since by other code
    git("commit", "-qam", "re-locked")
    result = invoke("reproduce", str(handed), root=root)
    assert result.exit_code == 0, result.output
    [line] = [x for x in result.stdout.splitlines() if x.startswith("    pricing model  ")]
    assert line.startswith("    pricing model  changed (d82efb38ac44 → ")
    assert line.endswith(
        f"); the lock's code is commit {wrote}'s (2026-12-03: the oldest commit whose locks record d82efb38ac44): run "
        f"it in a work tree of its own, `git worktree add --detach ../at-lock {wrote}` (README: The price a lock "
        "recorded, from the code that wrote it)"
    )
    # A digest no lock of the history records (a listed one: slip 55): nothing more is said.
    _redigested(lock, handed, "sha256:2516003eb31b4a1ce53a7ec3a98c5bcfa8d819e7ee158f9105bd12160d72271c")
    [line] = [x for x in invoke("reproduce", str(handed), root=root).stdout.splitlines()
              if x.startswith("    pricing model  ")]
    assert line.startswith("    pricing model  changed (2516003eb31b → ") and line.endswith(")")

"""Findings of the twenty-eighth walkthrough: a platform engineer choosing between the B200 and the MI300X for a
mixture of experts (Qwen3-30B-A3B), following README.md alone: a fact change reviewed, a lock of an older commit
reproduced, a price's citations traced to their documents."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import REPO, bad, copy_root, invoke

B200_BANDWIDTH = ("fact", "set", "b200", "memory.bandwidth", "--value", "7.7", "--unit", "TB/s", "--provenance",
                  "published", "--source", "glennklockwood-b200", "--locator", "later HGX B200 datasheet: 7.7 TB/s")


def test_fact_set_says_what_the_recompute_it_advises_needs_first(tmp_path: Path) -> None:
    # Was: the hint named `passprice fact recompute b200`, which then exited 2: streams.read = 7.35 TB/s / 7.7 TB/s
    # = 0.954545… repeats, and its derivation has no digits. The stale line (fact set's, check's) now says so, and
    # what to add.
    root = copy_root(tmp_path)
    # Since session 25 the shipped streams.read states its digits (5); the case is a derivation without them.
    card = root / "facts" / "cards" / "b200.toml"
    digits = 'derivation.formula = "measured / bandwidth"\nderivation.digits = 5\n'
    assert card.read_text().count(digits) == 1
    card.write_text(card.read_text().replace(digits, 'derivation.formula = "measured / bandwidth"\n'))
    result = invoke(*B200_BANDWIDTH, root=root)
    assert result.exit_code == 0, result.output
    # left51: the parts the line does not show are named (the new citation and the note dropped were not)
    assert result.stdout == ("facts/cards/b200.toml: memory.bandwidth: 8 TB/s (published) -> 7.7 TB/s (published) "
                             "(citation changed, note removed)\n")
    lines = result.stderr.splitlines()
    assert lines[0] == (
        "passprice: warning: facts/cards/b200.toml: streams.read is stale: its input bandwidth = memory.bandwidth: "
        "8 TB/s when derived, 7.7 TB/s now; recomputed from today's inputs it is 0.9545454545…, not 0.91875; its "
        "derivation has no digits and no decimal of at most 15 digits is that value: add "
        "streams.read.derivation.digits (the significant digits it is rounded to) before `fact recompute` can write it"
    )
    assert lines[1] == ("passprice: warning: facts/cards/b200.toml: `passprice fact recompute b200` writes it from "
                        "today's inputs (`passprice diff` fails a change that leaves a derived fact stale)")
    # check says the same on its stale line, above the command it names.
    checked = invoke("check", root=root)
    assert checked.exit_code == 1
    assert lines[0].removeprefix("passprice: warning: ") in checked.stdout.splitlines()[1]
    bad("fact", "recompute", "b200", root=root, says="streams.read: measured / bandwidth gives 0.9545454545…")
    pinned = 'derivation.inputs.bandwidth = { fact = "memory.bandwidth", value = 8, unit = "TB/s" }\n'
    assert card.read_text().count(pinned) == 1
    card.write_text(card.read_text().replace(pinned, pinned + "derivation.digits = 4\n"))
    # The warning is gone once the digits are there: the edit is made again (7.7 → 7.7 is no edit, so 7.71).
    again = invoke(*B200_BANDWIDTH[:5], "7.71", *B200_BANDWIDTH[6:], root=root)
    assert again.exit_code == 0 and "derivation.digits" not in again.stderr, again.output
    done = invoke("fact", "recompute", "b200", root=root)
    assert done.exit_code == 0, done.output
    # By hand: read 7.35 / 7.71 = 0.95331 → 0.9533; append = read × (2.97/3.18 + 4.15/4.48) / 2 (the Hopper
    # Triad/Dot ratios) = 0.9533 × 0.930151 = 0.88671 → 0.8867; rewrite = read × (2.9/3.18 + 4.0/4.48) / 2 (Mul/Dot)
    # = 0.9533 × 0.902404 = 0.86026 → 0.8603.
    assert round(7.35 / 7.71, 4) == 0.9533
    assert round(0.9533 * (2.97 / 3.18 + 4.15 / 4.48) / 2, 4) == 0.8867
    assert round(0.9533 * (2.9 / 3.18 + 4.0 / 4.48) / 2, 4) == 0.8603
    assert done.stdout.splitlines() == [
        "facts/cards/b200.toml: streams.read: 0.91875 -> 0.9533 (recomputed from today's inputs)",
        "facts/cards/b200.toml: streams.append: 0.8546 -> 0.8867 (recomputed from today's inputs)",
        "facts/cards/b200.toml: streams.rewrite: 0.8291 -> 0.8603 (recomputed from today's inputs)",
        "facts/cards/b200.toml: provenance kept: streams.read, streams.append, streams.rewrite stay estimated (a "
        "recompute moves the value its formula gives from today's inputs, not what the fact rests on: still the "
        "figure it cites, as its provenance says; `passprice fact set` changes the provenance by hand)",  # slip 53
    ]
    assert invoke("check", root=root).exit_code == 0


def test_no_hint_of_digits_where_the_recompute_can_write_every_share(tmp_path: Path) -> None:
    # The H200's shares carry digits = 4: the README's what-if (5.2 TB/s) gets the recompute hint alone.
    root = copy_root(tmp_path)
    result = invoke("fact", "set", "h200_sxm_141gb", "memory.bandwidth", "--value", "5.2", "--unit", "TB/s",
                    "--provenance", "published", "--source", "nvidia-h200-datasheet", "--locator",
                    "a what-if: the datasheet figure raised", root=root)
    assert result.exit_code == 0, result.output
    assert "`passprice fact recompute h200_sxm_141gb` writes them" in result.stderr
    assert "derivation.digits" not in result.stderr


def test_the_b200_and_mi300x_prices_of_qwen3_30b_a3b_by_hand() -> None:
    # Batch 64 on the measured routing (the H200 serving's), memory-bound on both cards. weight_bytes 13,774,102,215
    # B (the expected experts the routing reads), 201,424,896 B a sequence:
    #   B200:   13,774,102,215 / (8 TB/s × 0.91875) + 64 × 201,424,896 / (8 TB/s × 0.8546)
    #         = 1.87403 ms + 1.88556 ms = 3.75959 ms → 64 / 3.75959 ms = 17,023.1 tokens/s
    #   MI300X: 13,774,102,215 / (5.3 TB/s × 0.7302) + 64 × 201,424,896 / (5.3 TB/s × 0.7717)
    #         = 3.55914 ms + 3.15187 ms = 6.71102 ms → 9,536.6 tokens/s
    expected = {"b200": (8e12, 0.91875, 0.8546, 17023.1), "mi300x": (5.3e12, 0.7302, 0.7717, 9536.6)}
    for card, (bandwidth, read, append, shown) in expected.items():
        out = json.loads(invoke("price", "qwen3-30b-a3b-h200", "--card", card, "--json").stdout)
        weights = out["weight_bytes"]  # 13,774,102,215.41 B: the expected distinct experts' bytes are fractional
        assert round(weights) == 13774102215 and out["sequence_bytes"] == 201424896 and out["binds"] == "memory"
        memory = weights / (bandwidth * read) + 64 * 201424896 / (bandwidth * append)
        assert abs(out["memory_s"] - memory) < 1e-15
        assert abs(out["tokens_per_s"] - 64 / memory) < 1e-6 and round(out["tokens_per_s"], 1) == shown
    assert round(13774102215 / (8e12 * 0.91875) * 1e3, 5) == 1.87403
    assert round(64 * 201424896 / (5.3e12 * 0.7717) * 1e3, 5) == 3.15187


def test_reproduce_of_a_lock_at_a_git_revision_says_how_to_read_it_out_of_git() -> None:
    # Was: "lock '5e6c3a4:locks/qwen3-30b-a3b-h200.lock.toml': no such file, and not in …/locks; did you mean
    # qwen3-30b-a3b-h200? …": the lock as it is today, not the one asked for.
    [line] = bad("reproduce", "5e6c3a4:locks/qwen3-30b-a3b-h200.lock.toml")
    assert line == (
        "passprice: error: lock '5e6c3a4:locks/qwen3-30b-a3b-h200.lock.toml': a lock at a git revision is not read "
        "from git: write it out first, `git show 5e6c3a4:locks/qwen3-30b-a3b-h200.lock.toml > "
        "old-qwen3-30b-a3b-h200.lock.toml`, then name that file (`passprice reproduce "
        "old-qwen3-30b-a3b-h200.lock.toml`); to run the code that wrote it too, see the README's 'The price a lock "
        "recorded, from the code that wrote it'"
    )
    # A name that is no revision:path keeps the registry's hints.
    [other] = bad("reproduce", "qwen3-30b-a3b-b200")
    assert "did you mean qwen3-30b-a3b-h200?" in other


def test_the_readme_s_review_comment_is_what_diff_prints(tmp_path: Path) -> None:
    # Was: the README's pull-request comment lacked the "**derivation**: … → (none)" line diff prints for the
    # estimate that replaced the measured, derived streams.rewrite.
    import shutil

    base = copy_root(tmp_path / "base")
    head = tmp_path / "head"
    shutil.copytree(base, head)
    edit = invoke("fact", "set", "h200_sxm_141gb", "streams.rewrite", "--value", "0.8", "--unit", "1",
                  "--provenance", "estimated", "--source", "azure-ai-benchmarking-guide", "--locator",
                  "Engineering estimate for this walk-through (no measurement): 0.96 x the BabelStream Mul share",
                  "--note", "basis: an in-place read-modify-write assumed 4 % slower than the Mul kernel's separate "
                  "read and write streams", root=head)
    assert edit.exit_code == 0, edit.output
    review = invoke("diff", str(base), str(head), "--format", "markdown", root=head)
    assert review.exit_code == 1, review.output
    printed = review.stdout.splitlines()
    readme = (REPO / "README.md").read_text()
    block = readme.split("```markdown\n")[1].split("\n```")[0].splitlines()
    assert ("  - **derivation**: mul / bandwidth, to 4 significant digits; mul = 4 TB/s (Azure_Results/"
            "ND_H200_v5_results.md, HBM Bandwidth table (BabelStream): row '| Mul   | 4.00              |' in TB/s); "
            "bandwidth = the fact memory.bandwidth, "
            "4.8 TB/s when derived → (none)") in block
    # Every line of the README's comment but its first (the base's label and hash are the reader's) is printed, and
    # every line printed up to the servings no lock pins is in the README.
    assert [line for line in block[1:] if line not in printed] == []
    facts_and_locks = printed[1:printed.index("#### Servings no lock pins")]
    assert [line for line in facts_and_locks if line not in block] == []


def test_a_sources_audit_lists_the_measured_runs_citing_it(tmp_path: Path) -> None:
    # Was: `audit --source ggml-org-llama-cpp` printed "facts citing it: 0" and nothing else, as if nothing rested
    # on the document, while 11 runs of llamacpp-points.toml cite it (no registered stack is fitted to them).
    out = invoke("audit", "--source", "ggml-org-llama-cpp")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    at = lines.index("measured runs citing it: 11")
    assert lines[at + 1].split() == ["file", "runs", "ids", "stacks", "cards"]
    assert lines[at + 3].split() == [
        "registry/measurements/llamacpp-points.toml", "11", "pr4766.rtx_4090.cl-7b-f16.tg128", "and", "10", "more",
        "llamacpp-cuda-2401,", "llamacpp-cuda-2404", "and", "3", "more", "rtx_4090,", "h100_pcie_80gb",
    ]
    data = json.loads(invoke("audit", "--source", "ggml-org-llama-cpp", "--json").stdout)
    [runs] = data["runs"]
    assert runs["file"] == "registry/measurements/llamacpp-points.toml" and len(runs["ids"]) == 11
    assert runs["cards"] == ["rtx_4090", "h100_pcie_80gb"]
    # The 111 llama-bench runs and 5 older points cite the benchmark repository: 116, in two files.
    xd = json.loads(invoke("audit", "--source", "xiongjiedai-gpu-benchmarks", "--json").stdout)
    assert [(r["file"], len(r["ids"])) for r in xd["runs"]] == [
        ("registry/measurements/llamacpp-points.toml", 5),
        ("registry/measurements/xiongjiedai-llama3-llamabench.toml", 111),
    ]
    # A source no run cites prints no such section (the README's audit of the Azure guide is unchanged).
    assert "measured runs citing it" not in invoke("audit", "--source", "azure-ai-benchmarking-guide").stdout
    # A team's own run of a mixture of experts, citing its notes, is named by its id.
    root = copy_root(tmp_path)
    (root / "notes").mkdir()
    (root / "notes" / "b200.md").write_text("Measured decode on one B200 (vLLM, batch 32): 9,000 tokens/s.\n")
    (root / "sources" / "my-notes.toml").write_text(
        '[source]\ntitle = "Platform notes"\nkind = "registry"\npublisher = "platform team"\n'
        'path = "notes/b200.md"\nread = "figures read off the notes"\n')
    (root / "registry" / "measurements" / "platform-b200.toml").write_text(
        '[source]\nname = "Our B200 runs"\nsource = "my-notes"\n\n[[run]]\nid = "pt.b200.gpt-oss-20b.b32"\n'
        'stack = "vllm-0.10"\ncard = "b200"\ncheckpoint = "gpt-oss-20b-mxfp4"\nrouting = "uniform"\nbatch = 32\n'
        'positions = [4096, 8192]\ntokens_per_s = 9000\n'
        'locator = "Measured decode on one B200 (vLLM, batch 32): 9,000 tokens/s"\n')
    mine = invoke("audit", "--source", "my-notes", root=root)
    assert mine.exit_code == 0, mine.output
    lines = mine.stdout.splitlines()
    at = lines.index("measured runs citing it: 1")
    assert lines[at + 3].split() == ["registry/measurements/platform-b200.toml", "1", "pt.b200.gpt-oss-20b.b32",
                                     "vllm-0.10", "b200"]
    markdown = invoke("audit", "--source", "my-notes", "--format", "markdown", root=root).stdout
    assert ("| `registry/measurements/platform-b200.toml` | 1 | pt.b200.gpt-oss-20b.b32 | vllm-0.10 | b200 |"
            in markdown.splitlines())


def test_reproduce_says_once_which_drifted_facts_changed_only_their_citation(tmp_path: Path) -> None:
    # Was: a lock of December 1st (format 1) reproduced with ten lines "array: tokens/s unchanged", "memory.bandwidth:
    # tokens/s unchanged", …, one a fact whose figure and provenance were the pinned ones, only its citation
    # rewritten since. Here two such facts: said on one line; a fact whose figure moved keeps its own.
    root = copy_root(tmp_path)
    card = root / "facts" / "cards" / "h200_sxm_141gb.toml"
    text = card.read_text()
    for quoted in ("'GPU Memory 141GB 141GB'\"", "'GPU Memory Bandwidth 4.8TB/s 4.8TB/s'\""):
        assert text.count(quoted) == 1
        text = text.replace(quoted, quoted[:-1] + " (re-read 2026-12-04)\"")
    card.write_text(text.replace("\n[scale]\nvalue = 33.5\n", "\n[scale]\nvalue = 30\n"))
    result = invoke("reproduce", "locks/qwen3-30b-a3b-h200.lock.toml", root=root)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = lines.index("  each drifted fact alone (the pinned inputs with only it as today's):")
    assert lines[at + 1].startswith("    scale: tokens/s unchanged (scale_s ")
    assert lines[at + 2:] == [
        "    memory.bandwidth, memory.capacity: tokens/s unchanged (each its citation alone changed: the "
        "figure and provenance are the pinned ones)"
    ]
    assert ("3 drifted: memory.bandwidth: 4.8 TB/s as pinned (citation changed); memory.capacity: 141 GB as pinned "
            "(citation changed); scale: 33.5 Tcycle/s (estimated) → 30 Tcycle/s (estimated)" in result.stdout)

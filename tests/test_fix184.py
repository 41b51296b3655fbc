"""What a new user found on the merged main (README only): each case rebuilt here, with the exit status and the exact
lines the command gives now."""

from __future__ import annotations

from cli_helpers import invoke

R1 = "r1-qwen7b-h200"


def _line(output: str, head: str) -> str:
    found = [line.strip() for line in output.splitlines() if line.strip().startswith(head)]
    assert len(found) == 1, output
    return found[0]


# --- 1. host why at a fixed batch: the memory-use cap does not bind ------------------------------------------------

FASTER = ("host why      4 sequences in host memory though card memory has room for 284 more: the pass is faster so, "
          "the host link reading their KV cache beside card memory's stream (memory and host terms overlap); the "
          "price now rests on host.* facts (its weakest may be host.capacity): --no-host-memory keeps every sequence "
          "in card memory")


def test_1_fixed_batch_ignores_the_cap_in_host_why() -> None:
    """``price --host-memory --memory-use 0.2 --batch 300`` said a 28.2 GB cap (20 % of 141 GB) held no more while
    74.2 GB was held: a fixed batch ignores the cap, so the line gives the true reason, as without --memory-use."""
    for extra in (("--memory-use", "0.2"), ("--memory-use", "0.5"), ()):
        priced = invoke("price", R1, "--host-memory", "--batch", "300", *extra, "--no-lock")
        assert priced.exit_code == 0, priced.output
        assert _line(priced.stdout, "host why") == FASTER
        assert _line(priced.stdout, "held ") == "held          74.2 GB of 141 GB card memory (52.6 %)"


def test_1_no_host_memory_advised_only_when_the_batch_fits() -> None:
    """At batch 700, 120 sequences are in host memory and --no-host-memory is refused (NotResident: 580 fit, the
    580 in card memory plus none in the 91.89 MB left at 234.9 MB a sequence): the line says so."""
    priced = invoke("price", R1, "--host-memory", "--batch", "700", "--no-lock")
    assert priced.exit_code == 0, priced.output
    assert _line(priced.stdout, "host why") == (
        "host why      120 sequences in host memory: card memory holds no more (91.89 MB left, 234.9 MB a sequence); "
        "the price now rests on host.* facts (its weakest may be host.capacity): card memory holds 580 sequences of "
        "this serving, so --no-host-memory keeps every sequence there only with a batch of at most 580")
    refused = invoke("price", R1, "--batch", "581", "--no-lock")
    assert refused.exit_code == 1 and "at most 580 sequences fit" in refused.output
    assert invoke("price", R1, "--batch", "580", "--no-lock").exit_code == 0


def test_1_best_under_the_cap_still_names_it() -> None:
    """best searches under --memory-use: there the cap binds and the line names it."""
    found = invoke("best", R1, "--host-memory", "--memory-use", "0.8", "--no-lock")
    assert found.exit_code == 0, found.output
    assert _line(found.stdout, "host why").startswith(
        "host why      6 sequences in host memory: the memory-use cap, 80 % of card memory (112.8 GB of 141 GB")

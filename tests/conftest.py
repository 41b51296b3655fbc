"""Every test (and every process a test starts) uses a private, empty cache of validated files, never the user's,
and starts its processes with Ctrl-C (SIGINT) as a command typed at a terminal has it, whatever the runner was given."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PASSPRICE_CACHE_DIR", str(tmp_path_factory.mktemp("passprice-cache")))
        mp.delenv("PASSPRICE_NO_CACHE", raising=False)
        yield


@pytest.fixture(autouse=True)
def _no_digest_taken_before(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test starts with no pricing-model digest kept in the process (``pins._TAKEN``, scale88): a test that
    counts the digests computed in a cache of its own (test_cache, test_digest77) would otherwise find one an earlier
    test of the same worker took of the same bytes. The running package's trees (``pins._OWN_TREES``) are kept from
    test to test of a worker, as a process keeps them (a tree is a function of the module's bytes), and so are the
    objects kept by content past a command (``snapshot._LASTING``, emptied for a module that sets
    ``FRESH_LASTING = True``: it counts the locks built); the trees are emptied only for
    a module that sets ``FRESH_TREES = True`` (tests/test_cap142.py counts the parses of a copy of the package's
    modules, which a tree kept would spare). Emptied before every test, they were parsed again by every test whose
    review or check took a digest in a cache folder of its own: a tenth of the review tests' time."""
    from passprice import pins

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pins, "_TAKEN", {})
        if getattr(request.module, "FRESH_TREES", False):
            mp.setattr(pins, "_OWN_TREES", {})
        if getattr(request.module, "FRESH_LASTING", False):
            # a module that counts the locks built (``locks._lock_of_file``): none kept from an earlier test's
            # command (``snapshot._LASTING``, kept for the process by content)
            from passprice import snapshot

            mp.setattr(snapshot, "_LASTING", type(snapshot._LASTING)())
        yield


@pytest.fixture(autouse=True, scope="session")
def _ctrl_c_as_at_a_terminal() -> Iterator[None]:
    """SIGINT delivered (not blocked) and handled by Python (not ignored) in the test process for the session, so
    that every process a test starts inherits what a command typed at a terminal has. A runner started as a
    background job of a non-interactive shell (``pytest … &`` in a script, as loaded multi-file runs were: POSIX
    shells start such a job with SIGINT and SIGQUIT ignored) passed the ignored SIGINT to each child; passprice
    rightly leaves an ignored SIGINT ignored (:func:`passprice.entry.early`), so the 15 tests whose child sends
    itself a Ctrl-C failed there with exit 0 (session 35, flaky63). Both are put back as they were at the end."""
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    mask = getattr(signal, "pthread_sigmask", None)
    blocked = mask is not None and signal.SIGINT in mask(signal.SIG_BLOCK, ())
    with contextlib.suppress(ValueError):  # not the main thread: signal.signal cannot be called; left as it is
        if ignored:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if blocked and mask is not None:
            mask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            if blocked and mask is not None:
                mask(signal.SIG_BLOCK, {signal.SIGINT})
            if ignored:
                signal.signal(signal.SIGINT, signal.SIG_IGN)

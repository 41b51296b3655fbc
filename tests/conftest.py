"""Every test (and every process a test starts) uses a private, empty cache of validated files, never the user's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PASSPRICE_CACHE_DIR", str(tmp_path_factory.mktemp("passprice-cache")))
        mp.delenv("PASSPRICE_NO_CACHE", raising=False)
        yield

"""Fixtures of the editor tests."""

from __future__ import annotations

import pytest
from support.editors import NVIMS


@pytest.fixture(params=NVIMS or [None], ids=lambda p: p or "no-nvim")
def nvim(request) -> str:
    """Each Neovim found (support.editors.NVIMS), or a skip with the reason when there is none."""
    if request.param is None:
        pytest.skip("Neovim is not installed (apt-get install -y neovim; .ci/run installs it)")
    return request.param

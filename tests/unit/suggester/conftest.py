"""Fixtures of the in-process suggester tests (their helpers: :mod:`support.suggester`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.suggester import copy_workspace


@pytest.fixture
def shopcart(tmp_path: Path) -> Path:
    """A copy of ``tests/data/workspaces/shopcart`` (tests may change it)."""
    return copy_workspace(tmp_path, "shopcart")

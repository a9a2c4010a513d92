import pytest


@pytest.fixture
def session():
    from demo_pkg.core import Session

    return Session()

import pytest

from shopcart import Cart, LineItem


@pytest.fixture
def cart() -> Cart:
    c = Cart()
    c.add(LineItem("apple", 2, 50))
    c.add(LineItem("apple", 1, 50))
    return c

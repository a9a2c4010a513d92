from shopcart import apply_discount


def test_apply_discount(cart):
    assert apply_discount(cart, 10) == 135

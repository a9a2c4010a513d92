def test_merge_items(cart):
    merged = cart.merge_items()
    assert len(merged) == 1 and merged[0].quantity == 3

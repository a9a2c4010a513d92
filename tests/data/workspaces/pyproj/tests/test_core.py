def test_merge(session):
    assert session.merge_setting("a", 1) == {"a": 1}

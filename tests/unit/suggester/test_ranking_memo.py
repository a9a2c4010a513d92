"""The ranking's per-path answers are kept in bounded memos: the same answers as computed
afresh, and never more paths than the bound."""

from __future__ import annotations

from dsh_sidecar.suggester import ranking
from dsh_sidecar.suggester.candidates import is_test_path
from dsh_sidecar.suggester.fileindex import is_fixture


def test_per_path_answers_are_kept_within_their_bound() -> None:
    memos = (ranking.package_folder, ranking.stem_words, ranking._is_test, is_test_path, is_fixture)
    for memo in memos:
        memo.cache_clear()
    paths = [f"pkg/sub{i}/HttpClient_{i}.java" for i in range(ranking.PATH_MEMO + 10)]
    for path in paths:
        for memo in memos:
            memo(path)
    for memo in memos:
        info = memo.cache_info()
        assert info.currsize == info.maxsize == ranking.PATH_MEMO
    # the kept answers are the functions' own
    assert ranking.stem_words("m/src/main/java/org/x/HttpClient.java") == frozenset({"http", "client", "httpclient"})
    assert ranking.stem_words("m/src/main/java/org/x/HttpClient.java") == frozenset({"http", "client", "httpclient"})
    assert ranking.package_folder("m/src/test/java/org/x/ATest.java") == "m/src/*/org/x"
    assert ranking._is_test("pkg/tests/data/x.py") and not ranking._is_test("pkg/x.py")
    assert is_test_path("a/test_x.py") and not is_test_path("a/x.py")
    assert is_fixture("a/tests/data/x.py") and not is_fixture("a/x.py")

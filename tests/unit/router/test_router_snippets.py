"""Snippets keep their text: code-like text in every provider's fields comes
back as written; markup is removed from fields a provider documents as HTML (Brave's
``description``, DuckDuckGo's page) with an HTML parser, and from every other field only the
search highlight (a known formatting element opened and closed: ``<b>…</b>``,
``<span class="highlight">…</span>``); entities are decoded everywhere. Real HTTP to a
loopback mock in each provider's wire format."""

from __future__ import annotations

import pytest
from dsh_sidecar.router.normalize import RawItem, clean_text, normalize, strip_format_tags
from dsh_sidecar.router.providers import PROVIDERS
from support.providerbodies import answer
from support.routers import ALL, ROUTES, make_router

CODE_LIKE = [
    ("Vec<T> in std::vec - Rust", "Use Vec<String> when n < 10 and m > 2."),
    ("HashMap<K, V> & BTreeMap<K, V>", "fn f<'a>(x: &'a str) -> Option<&'a str> { None }"),
    ("<script> is not a tag here", "if (a<b && c>d) return x<<2; // <br> <!-- -->"),
    ("std::vector<int>::iterator", "List<Map<String, Integer>> m = new ArrayList<>();"),
]


def items(pairs):
    return [{"url": f"https://ex.example/{i}", "title": t, "snippet": s} for i, (t, s) in enumerate(pairs)]


@pytest.mark.parametrize("provider", ALL)
async def test_code_like_text_survives_every_provider(provider, mock_provider):
    mock_provider.route(*ROUTES[provider], answer(provider, items(CODE_LIKE)))
    router = make_router(mock_provider, provider, cache=False)
    try:
        res = await router.search("rust vec", 10)
    finally:
        await router.aclose()
    got = [(s.title, s.snippet) for s in res.sources]
    assert got == CODE_LIKE


@pytest.mark.parametrize("provider", ["brave", "duckduckgo"])
async def test_documented_html_fields_lose_their_markup_only(provider, mock_provider):
    """Brave's highlighted descriptions and DuckDuckGo's page: ``<strong>``/``<b>`` go, the
    escaped code-like text inside stays."""
    mock_provider.route(*ROUTES[provider], answer(provider, items(CODE_LIKE[:2]), markup=("<strong>", "</strong>")))
    router = make_router(mock_provider, provider, cache=False)
    try:
        res = await router.search("rust vec", 10)
    finally:
        await router.aclose()
    assert [s.snippet for s in res.sources] == [s for _, s in CODE_LIKE[:2]]


@pytest.mark.parametrize("provider", ["exa", "tavily", "perplexity", "searxng", "deepseek"])
async def test_plain_text_fields_lose_the_highlight_keep_tag_like_text_and_decode_entities(provider, mock_provider):
    pairs = [
        (
            "Alpha <b>one</b> and <span class='highlight'>two</span>",
            "Tom &amp; Jerry&#39;s &lt;b&gt;T&lt;/b&gt; &nbsp;end",
        ),
        ("Vec<T> where a < b <em>fast</em>", "<T extends X> List<i> x</b>"),
    ]
    mock_provider.route(*ROUTES[provider], answer(provider, items(pairs)))
    router = make_router(mock_provider, provider, cache=False)
    try:
        res = await router.search("q", 10)
    finally:
        await router.aclose()
    assert [(s.title, s.snippet) for s in res.sources] == [
        ("Alpha one and two", "Tom & Jerry's <b>T</b> end"),  # escaped markup is text
        ("Vec<T> where a < b fast", "<T extends X> List<i> x</b>"),
    ]


@pytest.mark.parametrize(
    ("raw", "stripped"),
    [
        ("Alpha <b>one</b>", "Alpha one"),  # SearXNG's engines
        ("<strong>Vec</strong> in std", "Vec in std"),  # Brave
        ('<span class="highlight">x</span> y', "x y"),
        ("<span data-x=1 hidden>x</span>", "x"),
        ("<B>up</B> <Em>case</eM>", "up case"),
        ("<b >spaced</b >", "spaced"),
        ("<b>a<b>b</b>c</b>", "abc"),  # nested
        ("<b><i>both</i></b>", "both"),
        ("Vec<T>", "Vec<T>"),
        ("a < b and c > d", "a < b and c > d"),
        ("<T extends X>", "<T extends X>"),
        ("if (a<b && c>d) x<<2", "if (a<b && c>d) x<<2"),  # no well-formed attributes: not a tag
        ("List<i> get()", "List<i> get()"),  # opened, never closed: text
        ("x</b> y", "x</b> y"),  # closed, never opened: text
        ("<em>x</strong>", "<em>x</strong>"),  # different elements
        ("<b/>x", "<b/>x"),
        ("<br>line<br/>", "<br>line<br/>"),  # not a highlight element
        ("<script>alert(1)</script>", "<script>alert(1)</script>"),  # not formatting: left as text
        ("&lt;b&gt;x&lt;/b&gt;", "&lt;b&gt;x&lt;/b&gt;"),  # entities decoded after, never stripped
        ("</b x>", "</b x>"),  # a closing tag has no attributes
        ("", ""),
    ],
)
def test_strip_format_tags(raw, stripped):
    assert strip_format_tags(raw) == stripped


def test_strip_format_tags_is_linear_on_hostile_text():
    """Many unclosed tags and attribute runs without ``>``: one pass, no backtracking blow-up
    (a quadratic scan of 20,000 tags would not finish in this test's time)."""
    hostile = "<b " + "a=1 " * 20_000 + "<b>" * 20_000 + "x" + "</i>" * 20_000
    assert strip_format_tags(hostile) == hostile


def test_html_fields_are_declared_by_the_providers_that_document_html():
    assert {pid: set(p.HTML_FIELDS) for pid, p in PROVIDERS.items() if p.HTML_FIELDS} == {
        "brave": {"snippet"},
        "duckduckgo": {"title", "snippet"},
    }


def test_clean_text_html_and_plain():
    assert clean_text("Vec<T> n < 10") == "Vec<T> n < 10"
    assert clean_text("<b>Vec</b>&lt;T&gt;", is_html=True) == "Vec<T>"
    assert clean_text("a<br>b <!-- c --> <i>d</i>", is_html=True) == "ab d"
    assert clean_text("broken <b unclosed", is_html=True) == "broken"
    assert clean_text("nul\x00 byte\x07 <i>x</i>", is_html=True) == "nul byte x"
    assert clean_text("<p></p>", is_html=True) is None
    assert clean_text("&amp;lt;", is_html=False) == "&lt;"  # decoded once, never twice
    assert clean_text("Alpha <b>one</b> &lt;b&gt;", is_html=False) == "Alpha one <b>"


def test_normalisation_stops_after_max_results_plus_one():
    """Items past the cap (+1, to know ``truncated``) are never normalised: a title that would
    fail to normalise (not a string: dropped field) far down the list is never looked at."""

    class Exploding:
        def __getattribute__(self, name):
            raise AssertionError("normalised an item past the cap")

    raw = [RawItem(url=f"https://x.example/{i}", title=f"t{i}") for i in range(6)]
    raw.append(RawItem(url="https://x.example/late", title=Exploding()))
    sources, truncated = normalize(raw, 5)
    assert [s.title for s in sources] == ["t0", "t1", "t2", "t3", "t4"] and truncated is True
    sources, truncated = normalize(raw[:5], 5)
    assert len(sources) == 5 and truncated is False


def test_whitespace_is_folded_as_the_regex_folds_it_for_every_code_point():
    """clean_text folds whitespace with str.split(); it must be re.sub(r"\\s+", " ", t).strip()
    exactly, for every character (NBSP, U+2028, the C0 separators, …)."""
    import re
    import sys

    ws = re.compile(r"\s+")
    for cp in range(sys.maxunicode + 1):
        c = chr(cp)
        if c.isspace() or ws.fullmatch(c):
            for text in (f"a{c}b", f"{c}a {c}{c}b{c}", c * 3):
                assert clean_text(text) == (ws.sub(" ", text).strip() or None), hex(cp)
    mixed = "\u00a0 Vec<T>\tin\u2028std::vec \x1c- Rust\u3000 "
    assert clean_text(mixed) == ws.sub(" ", mixed).strip() == "Vec<T> in std::vec - Rust"


def test_lone_surrogates_become_replacement_characters_and_other_text_is_kept():
    """A lone surrogate (JSON's ``"\\ud800"`` escape decodes to one) becomes U+FFFD; ASCII and
    other non-ASCII text come back as the same string."""
    from dsh_sidecar.router.normalize import no_lone_surrogates

    assert no_lone_surrogates("quota \ud800 exceeded \udfff") == "quota \ufffd exceeded \ufffd"
    assert no_lone_surrogates("caf\u00e9 \U0001f600 \ud83d") == "caf\u00e9 \U0001f600 \ufffd"
    for text in ("plain ascii <b>x</b>", "caf\u00e9 \U0001f600", ""):
        assert no_lone_surrogates(text) is text
    assert clean_text("a \ud800 b") == "a \ufffd b"

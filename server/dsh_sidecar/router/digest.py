"""One provider response read into sources: the provider's parser, then normalisation.

The router calls it on the event loop, on a thread or in the parsing worker process
(:mod:`dsh_sidecar.router.parsing`), by body size; the doctor's probe calls it too. It imports
neither the chain nor the worker, so each of them can import it.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from dsh_protocol import Source

from dsh_sidecar.redact import Redactor
from dsh_sidecar.router.normalize import WEB_SCHEMES, normalize
from dsh_sidecar.router.providers.base import BAD_RESPONSE, HttpResponse, Provider, ProviderAnswer, ProviderFailure

# the chain's logger: a parser bug is logged under the name it always had
log = logging.getLogger("dsh_sidecar.router.chain")


def digest(
    provider: Provider, response: HttpResponse, max_results: int, redactor: Redactor
) -> tuple[ProviderAnswer, list[Source], bool]:
    """Parse and normalise one response (redacted, cut to ``max_results`` before the rest is
    normalised). Raises :class:`ProviderFailure`; a parser bug is ``unreadable response``."""
    if response.redact is not redactor:
        response = replace(response, redact=redactor)
    try:
        answer = provider.parse_response(response, max_results)
        schemes = getattr(provider, "URL_SCHEMES", WEB_SCHEMES)
        sources, truncated = normalize(answer.items, max_results, redactor, provider.HTML_FIELDS, schemes)
        answer.items = []  # not needed past here (and not worth sending back from a worker)
    except ProviderFailure:
        raise
    except Exception as exc:  # a parser bug on hostile input must not crash the search
        log.warning("%s: parsing the response failed: %s", provider.ID, type(exc).__name__)
        raise ProviderFailure("unreadable response", BAD_RESPONSE) from None
    return answer, sources, truncated

"""Whether the config models read their attribute docstrings as field descriptions.

A flag of its own, below every layer (it imports nothing of the project and no pydantic), so
that ``dsh-search serve`` can turn it off before :mod:`dsh_sidecar.configmodel` is imported.
"""

from __future__ import annotations

import sys

__all__ = ["attribute_docstrings", "set_attribute_docstrings"]

#: Whether config models defined from now on read their attribute docstrings
#: (:func:`set_attribute_docstrings`); kept here so that ``dsh-search serve`` can choose before
#: pydantic and :mod:`dsh_sidecar.configmodel` are imported.
_attribute_docstrings = True


def attribute_docstrings() -> bool:
    """Whether config models defined from now on read their attribute docstrings as field
    descriptions (:func:`set_attribute_docstrings`)."""
    return _attribute_docstrings


def set_attribute_docstrings(enabled: bool) -> None:
    """Whether config models defined from now on read their attribute docstrings as field
    descriptions (pydantic's ``use_attribute_docstrings``, which re-reads and tokenises each
    class's source: ~30 ms of CPU for all the blocks). On by default (the JSON schema, the CLI,
    the tests); ``dsh-search serve`` turns it off first, since nothing it answers carries a
    description, and models already defined keep theirs. Imports nothing:
    :class:`~dsh_sidecar.configmodel.ConfigModel` takes the setting when it is defined, or at
    once when it already is."""
    global _attribute_docstrings
    _attribute_docstrings = enabled
    configmodel = sys.modules.get("dsh_sidecar.configmodel")
    if configmodel is not None:
        configmodel.ConfigModel.model_config["use_attribute_docstrings"] = enabled

"""How the commands' help names their options and arguments, as ruff, uv and gh do: a plain
flag (``--json``, ``--local/--no-local``) shows no value at all; an option that takes a value
shows one word for it (``--max-results -n N``, ``--config -c FILE``, ``--color WHEN``), its
``metavar`` or else its long name in capitals; an argument is shown by its name alone, bare
when required and in brackets when not (``dsh-search query [OPTIONS] QUERY``,
``dsh-search replay [OPTIONS] [TRACE]``).

Typer's own rendering gives every parameter its Python type (``--json <bool>``, ``QUERY <str>``)
and a required argument braces (``{QUERY}``). :class:`PlainTyper` builds every command and
group of the app with the classes below, which apply the rule above to each parameter as the
command lists them (:meth:`get_params`, which the help, the usage line and the parser read).
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption


class _NamedArgument(TyperArgument):
    """An argument shown by its name: no type column, no braces in the usage line."""

    def display_type_rich(self, ctx: Any) -> str | None:  # Any: Typer's vendored click Context
        return None

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


class _WordOption(TyperOption):
    """An option shown with one word for its value (none for a flag) and no range: the help
    text says the bounds in words (``1–50``), as the user reads them."""

    def display_type_rich(self, ctx: Any) -> str | None:  # Any: Typer's vendored click Context
        return value_word(self)

    def _get_number_range_help_str(self) -> str | None:
        return None


def value_word(option: TyperOption) -> str:
    """The word the help shows for an option's value: its ``metavar``, else its long name in
    capitals (``--max-age-days`` → ``MAX_AGE_DAYS``); empty for a plain flag."""
    if option.is_flag or option.count:
        return ""
    if option.metavar:
        return option.metavar
    long = next((o for o in option.opts if o.startswith("--")), option.opts[0])
    return long.lstrip("-").replace("-", "_").upper()


def plain_param(param: Any) -> Any:
    """``param`` shown by the rule of this module (idempotent; returns it). The parameter keeps
    its fields and behaviour; only its class changes, to one that displays it differently."""
    if isinstance(param, TyperOption) and not isinstance(param, _WordOption):
        param.__class__ = _WordOption
    elif isinstance(param, TyperArgument) and not isinstance(param, _NamedArgument):
        if param.metavar is None and param.name:
            param.metavar = param.name.upper()
        param.__class__ = _NamedArgument
    return param


class PlainCommand(TyperCommand):
    """A command whose parameters (its help option too) read as :func:`plain_param` shows them."""

    def get_params(self, ctx: Any) -> list[Any]:
        return [plain_param(p) for p in super().get_params(ctx)]


class PlainGroup(TyperGroup):
    """A group (``dsh-search``, ``bandit``, ``cache``) whose own options read as
    :func:`plain_param` shows them."""

    def get_params(self, ctx: Any) -> list[Any]:
        return [plain_param(p) for p in super().get_params(ctx)]


class PlainTyper(typer.Typer):
    """A Typer app whose commands are :class:`PlainCommand` unless one names its own class."""

    def command(self, *args: Any, cls: type[TyperCommand] | None = None, **kwargs: Any) -> Any:
        return super().command(*args, cls=cls or PlainCommand, **kwargs)

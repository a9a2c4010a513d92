"""The parser's usage errors worded as the commands' own are: a plain sentence that names the
flag or argument, and ``data.flag`` under ``--json``.

Typer parses the command line with its vendored Click and checks each value with pydantic, so a
bad value read ``Invalid value for '--max-results' / '-n': Input should be a valid integer,
unable to parse string as an integer`` and carried no ``data``. :func:`parser_error` turns each
kind of parser error into a :class:`CliError` (-32602, exit 2):

* a bad value: ``'-n' / '--max-results' must be a whole number, got 'abc'`` (the names as the
  user typed the flag first; ``must be at least 1``, ``must be one of auto, quick, thorough``);
* a missing value: ``'-n' / '--max-results' needs a value``;
* a missing argument or option: ``missing argument 'QUERY'``, ``missing option '--input' / '-i'``;
* an unknown option: ``unknown option '--max-result' (did you mean '--max-results'?)``;
* an unknown command or an extra argument: the parser's sentence, lower-cased and without its
  full stop, as the commands' own messages read;
* a word that is not UTF-8 (:func:`utf8_text`): ``'QUERY' must be UTF-8 text``, the bytes never
  quoted back (the parser decodes them with ``surrogateescape``; pydantic then named the
  decoding, not the argument).

``data.flag`` is the flag's long name (``--max-results``), an argument's name (``QUERY``) or
the unknown option as typed; an unknown command or an extra argument has no ``data``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from difflib import get_close_matches
from typing import Any

from pydantic import ValidationError
from typer._click import exceptions as click_errors
from typer.core import TyperArgument, TyperGroup, TyperOption

from dsh_sidecar.cli.output import CliError, usage_error

#: How much of a rejected value a message quotes (a pasted paragraph is not repeated back whole).
MAX_SHOWN_VALUE = 60

#: pydantic's error types for a value that is not a number, in words.
_NOT_A_NUMBER = {
    "int_parsing": "must be a whole number",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "bool_parsing": "must be true or false",
}
#: pydantic's error types for a number out of bounds, with the bound's key in the error's context.
_BOUNDS = {
    "greater_than_equal": ("must be at least", "ge"),
    "less_than_equal": ("must be at most", "le"),
    "greater_than": ("must be more than", "gt"),
    "less_than": ("must be less than", "lt"),
}
_NO_SUCH_COMMAND = re.compile(r"No such command '(?P<name>.*?)'\.")
_EXTRA_ARGUMENTS = re.compile(r"Got unexpected extra argument\(s\) \((?P<extra>.*)\)", re.DOTALL)


def parser_error(exc: click_errors.UsageError, args: Sequence[str], root: Any) -> CliError:
    """``exc`` (raised while parsing ``args`` with the command tree ``root``) as a usage error."""
    if isinstance(exc, click_errors.MissingParameter) and exc.param is not None:
        return _missing(exc.param)
    if isinstance(exc, click_errors.BadParameter) and exc.param is not None:
        return _bad_value(exc, exc.param, args)
    if isinstance(exc, click_errors.NoSuchOption):
        return _unknown_option(exc.option_name, exc.possibilities)
    if isinstance(exc, click_errors.BadOptionUsage):
        param = _option_named(exc.option_name, _command_of(root, args))
        if param is not None and "requires" in exc.message:
            return usage_error(f"{_names(param, args)} needs a value", flag=flag_name(param))
    command = _NO_SUCH_COMMAND.match(exc.message)
    if command is not None and exc.ctx is not None and isinstance(exc.ctx.command, TyperGroup):
        return _unknown_command(command["name"], list(exc.ctx.command.commands))
    extra = _EXTRA_ARGUMENTS.fullmatch(exc.message)
    if extra is not None:
        return usage_error(_extra_arguments(extra["extra"], exc.ctx))
    return usage_error(_sentence(exc.format_message()))


def utf8_text(value: str, name: str) -> str:
    """``value`` as given on the command line, or a usage error naming ``name`` (``QUERY``,
    ``--input``) when its bytes were not UTF-8 (a lone surrogate from ``surrogateescape``)."""
    if not _is_utf8(value):
        raise usage_error(f"'{name}' must be UTF-8 text", flag=name)
    return value


def _is_utf8(value: str) -> bool:
    """Whether ``value`` came from UTF-8 bytes (no lone surrogate of ``surrogateescape``)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def flag_name(param: Any) -> str:
    """What ``data.flag`` names: an option's long name, an argument's metavar (``QUERY``)."""
    if isinstance(param, TyperOption):
        return next((o for o in param.opts if o.startswith("--")), param.opts[0])
    return str(param.metavar or (param.name or "").upper())


def _names(param: Any, args: Sequence[str]) -> str:
    """``'-n' / '--max-results'``: an option's names, the one the user typed first."""
    if not isinstance(param, TyperOption):
        return f"'{flag_name(param)}'"
    opts = list(param.opts)
    typed = next((o for o in opts for a in args if _typed_as(a, o)), None)
    if typed is not None:
        opts.remove(typed)
        opts.insert(0, typed)
    return " / ".join(f"'{o}'" for o in opts)


def _typed_as(arg: str, opt: str) -> bool:
    """Whether the command-line word ``arg`` gives option ``opt`` (``-n``, ``-n5``,
    ``--max-results``, ``--max-results=5``)."""
    if opt.startswith("--"):
        return arg == opt or arg.startswith(opt + "=")
    return arg.startswith(opt) and not arg.startswith("--")


def _shown(value: Any) -> str:
    text = str(value)
    if len(text) > MAX_SHOWN_VALUE:
        text = text[: MAX_SHOWN_VALUE - 1] + "…"
    return repr(text)


def _bad_value(exc: click_errors.BadParameter, param: Any, args: Sequence[str]) -> CliError:
    cause = exc.__cause__  # pydantic's ValidationError, for a value Typer's coercion refused
    errors = cause.errors(include_url=False) if isinstance(cause, ValidationError) else []
    first: dict[str, Any] = dict(errors[0]) if errors else {}
    value = first.get("input")
    if isinstance(value, str) and not _is_utf8(value):  # never quoted back, whatever was expected
        value = None
        if first.get("type") == "string_unicode":
            return usage_error(f"{_names(param, args)} must be UTF-8 text", flag=flag_name(param))
    reason = _reason(first, param) or _sentence(exc.message)
    got = f", got {_shown(value)}" if value is not None else ""
    return usage_error(f"{_names(param, args)} {reason}{got}", flag=flag_name(param))


def _reason(error: dict[str, Any], param: Any) -> str | None:
    """What a value must be, from pydantic's error ``type`` and context (never its ``msg``)."""
    kind = error.get("type", "")
    if kind in _NOT_A_NUMBER:
        return _NOT_A_NUMBER[kind]
    if kind in _BOUNDS:
        words, key = _BOUNDS[kind]
        bound = (error.get("ctx") or {}).get(key)
        if isinstance(bound, float) and bound.is_integer():
            bound = int(bound)  # a float option's bound 0.0 reads as 0
        return f"{words} {bound}" if bound is not None else None
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None and descriptor.is_choice and descriptor.choices:
        return "must be one of " + ", ".join(str(c) for c in descriptor.choices)
    return None


def _missing(param: Any) -> CliError:
    if isinstance(param, TyperArgument):
        return usage_error(f"missing argument '{flag_name(param)}'", flag=flag_name(param))
    names = " / ".join(f"'{o}'" for o in param.opts)
    return usage_error(f"missing option {names}", flag=flag_name(param))


def _did_you_mean(candidates: Sequence[str]) -> str:
    if not candidates:
        return ""
    quoted = [f"'{c}'" for c in sorted(candidates)]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" (did you mean {listed}?)"


def _unknown_option(name: str, possibilities: Sequence[str] | None) -> CliError:
    return usage_error(f"unknown option '{name}'{_did_you_mean(possibilities or ())}", flag=name)


def _unknown_command(name: str, commands: list[str]) -> CliError:
    return usage_error(f"unknown command '{name}'{_did_you_mean(get_close_matches(name, commands))}")


def _extra_arguments(extra: str, ctx: Any) -> str:
    """``unexpected extra argument 'timeout'``; for ``query``, how to pass a query of several
    words (``dsh-search query httpx timeout`` is the likeliest way to get here)."""
    plural = "s" if len(extra.split()) > 1 else ""
    message = f"unexpected extra argument{plural} {_shown(extra)}"
    text = ctx.params.get("text") if ctx is not None and ctx.command.name == "query" else None
    if isinstance(text, str):
        message += f" (a query of several words is one argument: dsh-search query {shlex.quote(text + ' ' + extra)})"
    return message


def _sentence(message: str) -> str:
    """A parser sentence as the commands' messages read: lower-case first word, no full stop."""
    text = message.strip().rstrip(".")
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _command_of(root: Any, args: Sequence[str]) -> Any:
    """The (sub)command ``args`` name, walking the groups from ``root`` (for an error raised
    without its context: a flag missing its value)."""
    command = root
    for arg in args:
        if not isinstance(command, TyperGroup):
            break
        if arg in command.commands:
            command = command.commands[arg]
    return command


def _option_named(name: str, command: Any) -> TyperOption | None:
    for param in getattr(command, "params", ()):
        if isinstance(param, TyperOption) and name in (*param.opts, *param.secondary_opts):
            return param
    return None

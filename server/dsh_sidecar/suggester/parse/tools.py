"""The tables of the query model: tool names and aliases, the commands of each class, the
options that take a value per command family, ripgrep's types, and the input limits.
"""

from __future__ import annotations

from typing import Final

#: Longest input looked at, characters (signals read the head of a huge input).
MAX_INPUT_CHARS: Final = 4000
#: Longest result text scanned for paths, characters.
MAX_RESULT_CHARS: Final = 20_000
#: Most result paths kept (first seen first).
MAX_RESULT_PATHS: Final = 200

#: The pseudo tool name of a free-text question (MCP ``where_is`` with ``query``): not a valid
#: MCP/harness tool name (``<``, ``>``), so no agent's tool call is read as a question.
QUESTION_TOOL: Final = "<question>"
#: Tool names that only teach (never trigger a note): a note after an edit is too late.
WRITE_TOOLS: Final = frozenset(
    {"edit", "write", "multiedit", "rawwrite", "raw_write", "notebookedit", "apply_patch", "str_replace", "create"}
)
#: Aliases of the four search-class tools.
TOOL_ALIASES: Final = {
    "grep": "grep",
    "search": "grep",
    "rg": "grep",
    "ripgrep": "grep",
    "glob": "glob",
    "find": "glob",
    "ls": "glob",
    "list": "glob",
    "read": "read",
    "view": "read",
    "cat": "read",
    "open": "read",
    "bash": "bash",
    "shell": "bash",
    "exec": "bash",
    "run": "bash",
    "exec_command": "bash",
    "local_shell": "bash",
}
#: Shell commands that read files (their file arguments are reads).
READ_COMMANDS: Final = frozenset(
    {"cat", "head", "tail", "less", "more", "bat", "batcat", "nl", "wc", "sed", "awk", "jq", "yq", "tac", "view"}
)
#: Wrappers whose arguments are another command.
WRAPPERS: Final = frozenset({"xargs", "sudo", "env", "time", "timeout", "nice", "command", "exec", "nohup", "stdbuf"})

#: The text editor tools that view and write under one name (Anthropic's
#: ``str_replace_based_edit_tool``, ``str_replace_editor``): ``command`` is ``view`` (a read)
#: or ``create``/``str_replace``/``insert``/``undo_edit`` (a write).
TEXT_EDITOR_TOOLS: Final = frozenset({"str_replace_based_edit_tool", "str_replace_editor", "text_editor"})
#: Input keys holding the whole text a write tool puts in a file (Claude Code's ``Write``
#: ``content``, the Anthropic text editor tool's ``create`` ``file_text``, ``contents``).
SCRIPT_CONTENT_KEYS: Final = ("content", "file_text", "contents")

#: Options taking a value, per command family (a value is skipped with its option).
GREP_VALUE_OPTS: Final = frozenset(
    {"-A", "-B", "-C", "-m", "-f", "-d", "-D", "--max-count", "--context", "--after-context", "--before-context"}
    | {"--include", "--exclude", "--exclude-dir", "--color", "--colour", "--label", "--binary-files", "-e", "--regexp"}
)
RG_VALUE_OPTS: Final = frozenset(
    {"-A", "-B", "-C", "-m", "-g", "-t", "-T", "-f", "-e", "-E", "-j", "-M", "-r", "--glob", "--iglob", "--type"}
    | {"--type-not", "--max-count", "--context", "--after-context", "--before-context", "--max-depth", "--color"}
    | {"--colors", "--encoding", "--replace", "--max-columns", "--regexp", "--file", "--threads", "--sort", "--sortr"}
    | {"--type-add", "--max-filesize", "--path-separator", "-d", "--ignore-file", "--pre", "--engine"}
)
FD_VALUE_OPTS: Final = frozenset(
    {"-e", "--extension", "-t", "--type", "-d", "--max-depth", "--min-depth", "-E", "--exclude", "-x", "-X"}
    | {"--exec", "--exec-batch", "-j", "--threads", "-S", "--size", "--changed-within", "--changed-before", "-c"}
    | {"--color", "--base-directory", "--search-path", "-o", "--owner"}
)
HEAD_VALUE_OPTS: Final = frozenset({"-n", "-c", "--lines", "--bytes"})

#: ripgrep ``-t``/``--type`` names → language.
RG_TYPES: Final = {
    "py": "python",
    "python": "python",
    "js": "javascript",
    "ts": "typescript",
    "typescript": "typescript",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "kotlin": "kotlin",
    "ruby": "ruby",
    "rb": "ruby",
    "cs": "csharp",
    "csharp": "csharp",
    "cpp": "cpp",
    "c": "c",
    "php": "php",
    "swift": "swift",
    "md": "markdown",
    "markdown": "markdown",
    "rst": "rst",
    "toml": "toml",
    "yaml": "yaml",
    "json": "json",
    "sh": "shell",
}

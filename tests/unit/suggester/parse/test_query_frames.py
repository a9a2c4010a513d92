"""JVM and Node frames (``suggester/parse/runs.py``) and how a frame's path finds its workspace
file (``suggester/paths.py``: a JVM frame names its package's folder and file, not a path)."""

from __future__ import annotations

from pathlib import Path

from dsh_sidecar.suggester.candidates import FileIndex
from dsh_sidecar.suggester.parse import parse_call
from dsh_sidecar.suggester.parse.runs import jvm_frames, traceback_frames
from dsh_sidecar.suggester.paths import WorkspacePaths

# ------------------------------------------------------------------ JVM and Node frames

JAVA = """java.lang.IllegalStateException: boom
\tat org.apache.dubbo.rpc.RpcContext.get(RpcContext.java:42)
\tat org.apache.dubbo.rpc.RpcContext$Inner.lambda$run$0(RpcContext.java:7)
\tat java.base/java.lang.Thread.run(Thread.java:829)
\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
Caused by: java.lang.NullPointerException
\tat org.apache.dubbo.common.URL.getParameter(URL.java:100)
\t... 3 more
"""


def test_jvm_frames_name_the_package_folder_and_file_root_cause_first():
    assert jvm_frames(JAVA) == [
        ("org/apache/dubbo/common/URL.java", "getParameter"),
        ("org/apache/dubbo/rpc/RpcContext.java", "get"),
        ("org/apache/dubbo/rpc/RpcContext.java", "lambda$run$0"),
        ("java/lang/Thread.java", "run"),
    ]
    assert jvm_frames("\tat app//com.x.Ext.m(Ext.kt:5)\n\tat Main.main(Main.java:3)\n") == [
        ("com/x/Ext.kt", "m"),
        ("Main.java", "main"),
    ]
    q = parse_call("bash", {"command": "mvn -q test"}, JAVA)
    assert q.frames[0] == ("org/apache/dubbo/common/URL.java", "getParameter")


def test_node_frames_in_their_many_forms():
    text = (
        "    at Object.newLoader [as .ts] (/w/node_modules/pirates/lib/index.js:1:2)\n"
        "    at new Parser (/w/compiler/svelte.js:3:4)\n"
        "    at async load (/w/src/a.mjs:3:4)\n"
        "    at Function._load (node:internal/modules/cjs/loader:1:2)\n"
        "    at file:///w/src/x.mjs:3:5\n"
        "    at Object.unmount [as u] (/w/test/Modal.html:9:1)\n"
    )
    assert traceback_frames(text) == [
        ("/w/node_modules/pirates/lib/index.js", "newLoader"),
        ("/w/compiler/svelte.js", "Parser"),
        ("/w/src/a.mjs", "load"),
        ("/w/src/x.mjs", "<anonymous>"),
        ("/w/test/Modal.html", "unmount"),
    ]


def test_a_jvm_frame_resolves_to_the_one_listed_file_under_a_source_root():
    files = [
        "dubbo-rpc/dubbo-rpc-api/src/main/java/org/apache/dubbo/rpc/RpcContext.java",
        "dubbo-compatible/src/main/java/com/alibaba/dubbo/rpc/RpcContext.java",
        "a/src/main/java/org/x/Dup.java",
        "b/src/main/java/org/x/Dup.java",
        "a/src/main/java/org/x/Only.java",
        "a/src/test/java/org/x/Only.java",
    ]
    paths = WorkspacePaths(Path("/nonexistent"), FileIndex(Path("/nonexistent"), files))
    assert paths.frame_path("org/apache/dubbo/rpc/RpcContext.java") == files[0]  # the package disambiguates
    assert paths.frame_path("com/alibaba/dubbo/rpc/RpcContext.java") == files[1]
    assert paths.frame_path("org/x/Dup.java") is None  # two modules: no guess
    assert paths.frame_path("org/x/Only.java") == "a/src/main/java/org/x/Only.java"  # the test tree's left out
    assert paths.frame_path("RpcContext.java") is None  # a name alone says no folder
    assert paths.frame_path("java/lang/Thread.java") is None


def test_paths_of_a_containers_copy_of_the_workspace_map_to_its_files_and_folders():
    files = ["lib/plugins/aws/index.js", "lib/Serverless.js", "setup.py", "src/a/b.py", "docs/x.md"]
    paths = WorkspacePaths(Path("/w/repo"), FileIndex(Path("/w/repo"), files))
    assert paths.in_container("/workspace/lib/plugins/aws/index.js") == "lib/plugins/aws/index.js"
    assert paths.in_container("/workspace/setup.py") == "setup.py"
    assert paths.in_container("/workspace/lib/plugins") == "lib/plugins"
    assert paths.in_container("/testbed/src") == "src"
    assert paths.in_container("/x/y/setup.py") is None  # a root file's name alone, three deep
    assert paths.in_container("/x/y/src") is None
    assert paths.in_container("/usr/lib/python3/site-packages/src/a/b.py") is None  # the machine's
    assert paths.in_container("/tmp/setup.py") is None
    q = paths.relative(
        parse_call("bash", {"command": "cd /workspace && grep -rn Deploy lib/plugins && cat /workspace/setup.py"})
    )
    assert (q.scope, q.reads) == (["lib/plugins"], ["setup.py"])


def test_an_edit_under_the_machines_own_folders_is_no_edit_of_a_workspace_file():
    """``written_path`` maps an absolute write outside the root by suffix (a container's copy
    of the workspace), but never one under the machine's own folders: an edit of ``/etc/hosts``,
    ``/etc/nginx/nginx.conf`` or an installed copy under ``/usr`` is not an edit of the
    repository's ``hosts``, ``nginx/nginx.conf`` or ``src/a/b.py``, nor a new file in its
    ``etc/`` folder."""
    files = ["hosts", "nginx/nginx.conf", "etc/motd", "src/a/b.py", "setup.py"]
    paths = WorkspacePaths(Path("/w/repo"), FileIndex(Path("/w/repo"), files))
    for outside in (
        "/etc/hosts",
        "/etc/nginx/nginx.conf",
        "/etc/new.conf",
        "/usr/lib/python3/site-packages/src/a/b.py",
        "/tmp/x/nginx/nginx.conf",
        "/home/u/other/src/a/b.py",
        "/var/www/src/a/new.py",
        "/",
        "\\",
    ):
        assert paths.written_path(outside) is None, outside
    assert paths.written_path("/testbed/nginx/nginx.conf") == "nginx/nginx.conf"  # a container's copy
    assert paths.written_path("/workspace/hosts") == "hosts"
    assert paths.written_path("/workspace/src/a/new.py") == "src/a/new.py"  # a new file in a listed folder
    assert paths.written_path("/w/repo/etc/hosts") == "etc/hosts"  # under the root: as spelt
    assert paths.written_path("etc/hosts") == "etc/hosts"


def test_a_query_with_nothing_to_make_relative_is_the_same_query_and_one_with_paths_a_new_one():
    files = ["src/a/b.py", "setup.py"]
    paths = WorkspacePaths(Path("/w/repo"), FileIndex(Path("/w/repo"), files))
    plain = parse_call("grep", {"pattern": "frobnicate", "path": "src"})
    assert paths.relative(plain) is plain  # the usual call: no copy
    absolute = parse_call("grep", {"pattern": "frobnicate", "path": "/w/repo/src"})
    moved = paths.relative(absolute)
    assert moved is not absolute and moved.scope == ["src"] and absolute.scope == ["/w/repo/src"]


def test_a_cd_above_the_root_is_kept_and_paths_under_it_map_back_into_the_workspace_or_out():
    """``cd ..`` from the workspace root leaves it: a later relative path names the root's
    parent's entries (``repo/src`` is the root's own ``src`` when the root is ``repo``; ``lib``
    is no longer the root's ``lib``), never the root's same-named folder; ``cd -`` goes back to
    the folder before the last ``cd``."""
    files = ["src/a/b.py", "setup.py", "lib/c.py"]
    paths = WorkspacePaths(Path("/w/repo"), FileIndex(Path("/w/repo"), files))

    def seen(command: str) -> tuple[list[str], list[str]]:
        q = paths.relative(parse_call("bash", {"command": command}))
        return q.scope, q.reads

    assert seen("cd .. && grep -rn foo repo/src") == (["src"], [])
    assert seen("cd .. && cat repo/setup.py") == ([], ["setup.py"])
    assert seen("cd .. && grep -rn foo lib") == (["../lib"], [])  # the parent's lib: outside the workspace
    assert seen("cd .. && grep -rn foo other/src") == (["../other/src"], [])
    assert seen("cd src/a && cd ../.. && cat setup.py") == ([], ["setup.py"])
    assert seen("cd src && cd a && cd - && grep -rn foo b.py") == (["src/b.py"], [])
    assert seen("cd src && cd - && grep -rn foo lib") == (["lib"], [])
    assert seen("cd /testbed && cd .. && cat testbed/setup.py") == ([], ["setup.py"])  # a container's copy


def test_a_cd_above_the_root_and_back_into_it_searches_the_whole_root():
    """``cd .. && cd repo`` (or ``cd ../repo``) is the workspace root again: its ``.`` is the
    whole tree, as a plain ``grep -rn foo .`` (``""``), not a folder outside the workspace."""
    paths = WorkspacePaths(Path("/w/repo"), FileIndex(Path("/w/repo"), ["src/a/b.py", "setup.py"]))

    def scope(command: str) -> list[str]:
        return paths.relative(parse_call("bash", {"command": command})).scope

    assert scope("grep -rn foo .") == [""]
    assert scope("cd .. && cd repo && grep -rn foo .") == [""]
    assert scope("cd ../repo && grep -rn foo .") == [""]
    assert scope("cd .. && grep -rn foo repo") == [""]
    assert scope("cd .. && grep -rn foo .") == [".."]  # the root's parent: outside


def test_a_write_in_the_machines_folders_is_no_workspace_file():
    files = ["yt-dlp/config.txt", "yt_dlp/options.py", "tmp/notes.md", "src/a/b.py", "README.md"]
    paths = WorkspacePaths(Path("/w/repo"), FileIndex(Path("/w/repo"), files))
    assert paths.written_path("/testbed/src/a/b.py") == "src/a/b.py"  # a container's copy
    assert paths.written_path("/testbed/README.md") == "README.md"
    assert paths.written_path("/testbed/src/a/new.py") == "src/a/new.py"  # a new file in a listed folder
    assert paths.written_path("/w/repo/yt_dlp/options.py") == "yt_dlp/options.py"
    assert paths.written_path("src/a/b.py") == "src/a/b.py"
    assert paths.written_path("/etc/yt-dlp/config.txt") is None  # the machine's configuration
    assert paths.written_path("/tmp/notes.md") is None
    assert paths.written_path("/tmp/Test.java") is None
    assert paths.written_path("/usr/lib/python3/site-packages/src/a/b.py") is None
    assert paths.written_path("/x/y/README.md") is None  # a name alone, two deep
    assert paths.written_path("/") is None and paths.written_path("\\") is None  # the root: no file

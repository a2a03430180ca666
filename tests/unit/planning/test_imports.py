"""The static import graph on real layouts: which file imports which, read without running."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_verify.planning import imports
from lsp_verify.planning.imports import Entry, read_imports, scan
from tests.support.cost import cpu_clock
from tests.support.files import write


def edges(folder: Path, pythonpath: tuple[str, ...] = ()) -> dict[str, set[str]]:
    graph = scan(str(folder), None, pythonpath)
    assert graph.problem is None
    return {source: set(targets) for source, targets in graph.edges.items()}


def test_statements_of_every_form_are_read() -> None:
    source = '''"""A module.

import not_a_module_in_prose, neither
from the folder of the run
"""
from __future__ import annotations
import os, json as j
import a.b as c
from . import x
from .. import y as z
from ..pkg.mod import (
    first,  # a comment (with a parenthesis
    second as other,
)
from q import \\
    r
if True:
    import inner.module
import s; from t import u
from v import *
'''
    found = set(read_imports(source))
    assert {
        (0, "__future__", ("annotations",)),
        (0, "os", ()),
        (0, "json", ()),
        (0, "a.b", ()),
        (1, "", ("x",)),
        (2, "", ("y",)),
        (2, "pkg.mod", ("first", "second")),
        (0, "q", ("r",)),
        (0, "inner.module", ()),
        (0, "s", ()),
        (0, "t", ("u",)),
        (0, "v", ()),
    } <= found
    # Prose in a docstring that reads as an import adds a name that resolves to nothing;
    # prose that does not (`from the folder of the run`) adds nothing.
    assert not any(module.startswith("the") for _, module, _ in found)


def test_flat_layout_direct_and_transitive(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/target.py": "VALUE = 1\n",
            "app/service.py": "from app.target import VALUE\n",
            "app/other.py": "import os\n",
            "tests/test_service.py": "from app import service\n",
            "tests/test_target.py": "import app.target as t\n",
        },
    )
    graph = edges(tmp_path)
    # `from app import service`: the package's __init__.py runs, and the submodule is found.
    assert graph["tests/test_service.py"] == {"app/__init__.py", "app/service.py"}
    assert graph["tests/test_target.py"] == {"app/__init__.py", "app/target.py"}
    assert graph["app/service.py"] == {"app/__init__.py", "app/target.py"}
    assert "app/other.py" not in graph  # os is not the project's


def test_src_layout(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/pkg/__init__.py": "from pkg.core import run\n",
            "src/pkg/core.py": "",
            "tests/test_core.py": "from pkg.core import run\n",
        },
    )
    graph = edges(tmp_path)
    assert graph["tests/test_core.py"] == {"src/pkg/__init__.py", "src/pkg/core.py"}
    assert graph["src/pkg/__init__.py"] == {"src/pkg/core.py"}


def test_pythonpath_of_pytest_configuration(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "lib/python/tools/__init__.py": "",
            "lib/python/tools/fmt.py": "",
            "checks/test_fmt.py": "from tools.fmt import *\n",
        },
    )
    assert "checks/test_fmt.py" not in edges(tmp_path)  # not on sys.path without it
    graph = edges(tmp_path, ("lib/python",))
    assert graph["checks/test_fmt.py"] == {
        "lib/python/tools/__init__.py",
        "lib/python/tools/fmt.py",
    }


def test_rootdir_test_modules_import_their_neighbours(tmp_path: Path) -> None:
    """pytest's prepend mode puts a test module's first non-package directory on sys.path:
    `import helpers` in tests/test_a.py is tests/helpers.py."""
    write(
        tmp_path,
        {
            "tests/helpers.py": "",
            "tests/test_a.py": "import helpers\n",
            "helpers/__init__.py": "",  # also on the path from the rootdir: both may be it
        },
    )
    assert edges(tmp_path)["tests/test_a.py"] == {"tests/helpers.py", "helpers/__init__.py"}


def test_namespace_packages(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "ns/part/mod.py": "",  # no __init__.py anywhere
            "tests/test_ns.py": "from ns.part import mod\nimport ns.part.mod\n",
        },
    )
    assert edges(tmp_path)["tests/test_ns.py"] == {"ns/part/mod.py"}


def test_relative_imports(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from . import b\nfrom .sub import c\nfrom .sub.d import name\n",
            "pkg/b.py": "",
            "pkg/sub/__init__.py": "from .. import b\n",
            "pkg/sub/c.py": "",
            "pkg/sub/d.py": "from ...outside import x\n",  # above the folder: not ours
        },
    )
    graph = edges(tmp_path)
    assert graph["pkg/a.py"] == {
        "pkg/__init__.py",
        "pkg/b.py",
        "pkg/sub/__init__.py",
        "pkg/sub/c.py",
        "pkg/sub/d.py",
    }
    assert graph["pkg/sub/__init__.py"] == {"pkg/__init__.py", "pkg/b.py"}
    assert "pkg/sub/d.py" not in graph


def test_a_cycle_is_two_edges(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"m/__init__.py": "", "m/a.py": "from m import b\n", "m/b.py": "from m import a\n"},
    )
    graph = edges(tmp_path)
    assert "m/b.py" in graph["m/a.py"] and "m/a.py" in graph["m/b.py"]


def test_a_file_that_does_not_parse_costs_no_crash(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/broken.py": "from app import ok\ndef f(:\n    return (\n",
            "app/ok.py": "",
            "app/binary.py": b"\xff\xfe\x00import app.ok\n",
            "app/huge.py": "x = 1\n" * (imports.MAX_FILE_BYTES // 6 + 1),
        },
    )
    graph = scan(str(tmp_path))
    assert "app/ok.py" in graph.edges["app/broken.py"]  # its imports are still read
    assert graph.entries["app/huge.py"].unreadable
    assert not graph.entries["app/binary.py"].unreadable


def test_skipped_folders_and_links(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app.py": "",
            ".venv/lib/x.py": "",
            "node_modules/y.py": "",
            "env/pyvenv.cfg": "",
            "env/lib/z.py": "",
            "pkg/__pycache__/w.py": "",
            "build/lib/app.py": "",
        },
    )
    (tmp_path / "loop").symlink_to(tmp_path)
    assert set(scan(str(tmp_path)).entries) == {"app.py"}


def test_a_second_scan_reads_only_what_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, {f"m{i}.py": f"import m{i + 1}\n" for i in range(20)})
    first = scan(str(tmp_path))
    assert first.changed == ()  # nothing to compare with
    read: list[str] = []
    real = imports._read

    def counting(path: str, key: tuple[int, int]) -> Entry:
        read.append(os.path.basename(path))
        return real(path, key)

    monkeypatch.setattr(imports, "_read", counting)
    write(tmp_path, {"m3.py": "import m0\n", "new.py": ""})
    (tmp_path / "m7.py").unlink()
    second = scan(str(tmp_path), first.entries)
    assert sorted(read) == ["m3.py", "new.py"]
    assert second.changed == ("m3.py", "m7.py", "new.py")
    assert second.edges["m3.py"] == {"m0.py"}


def test_too_many_files_is_a_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(imports, "MAX_FILES", 3)
    write(tmp_path, {f"m{i}.py": "" for i in range(5)})
    assert scan(str(tmp_path)).problem == "more than 3 Python files"


def test_five_thousand_files_under_a_second(tmp_path: Path) -> None:
    files: dict[str, str] = {}
    body = "".join(f"def f{k}(x):\n    return [y * {k} for y in range(x)]\n\n" for k in range(25))
    for p in range(50):
        files[f"src/pkg{p}/__init__.py"] = ""
        for m in range(99):
            files[f"src/pkg{p}/mod{m}.py"] = (
                f'"""Module {m}."""\nfrom __future__ import annotations\nimport os\n'
                f"from pkg{p} import mod{(m + 1) % 99}\nfrom pkg{(p + 1) % 50}.mod{m} import f1\n"
                f"from . import mod{(m + 2) % 99}\n\n" + body
            )
    write(tmp_path, files)
    assert len(files) == 5000
    start = cpu_clock()
    graph = scan(str(tmp_path))
    cold = cpu_clock() - start
    assert len(graph.entries) == 5000 and len(graph.edges) == 4950
    assert graph.edges["src/pkg3/mod5.py"] >= {"src/pkg3/mod6.py", "src/pkg4/mod5.py"}
    print(f"cold {cold:.3f}s")
    assert cold < 1.0, cold
    write(tmp_path, {"src/pkg0/mod0.py": "import os\n"})
    start = cpu_clock()
    again = scan(str(tmp_path), graph.entries)
    warm = cpu_clock() - start
    assert again.changed == ("src/pkg0/mod0.py",)
    print(f"warm {warm:.3f}s")
    assert warm < 0.5, warm


def test_a_hostile_file_costs_time_linear_in_its_size() -> None:
    """Every line an open parenthesis: each line is read once, not once per statement."""
    text = "import (\n" * 50_000 + "from a import (b,\n" * 25_000
    start = cpu_clock()
    read_imports(text)
    assert cpu_clock() - start < 1.0


def test_too_much_to_read_is_a_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(imports, "MAX_READ_BYTES", 2 * 2**20)
    write(tmp_path, {f"m{i}.py": "x = 1\n" * 200_000 for i in range(3)})  # 1.2 MB each
    assert scan(str(tmp_path)).problem is None  # over 1 MiB: not read, so not counted
    write(tmp_path, {f"n{i}.py": "x = 1\n" * 100_000 for i in range(4)})  # 0.6 MB each
    assert scan(str(tmp_path)).problem == "more than 2 MiB of Python to read"


def test_a_fifo_or_a_link_to_one_is_never_opened(tmp_path: Path) -> None:
    """Opening a FIFO would wait for a writer for ever: only regular files are read."""
    write(tmp_path, {"app.py": "import os\n"})
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "link.py").symlink_to(tmp_path / "pipe.py")
    assert set(scan(str(tmp_path)).entries) == {"app.py"}

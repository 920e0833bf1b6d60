"""The docs cannot drift from the code: every path that README.md, docs/*.md or a module's
header (its docstring or leading comments) names exists, and no product module imports
another's private name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "attention_book"
WEB_SRC = PACKAGE / "web" / "src"

#: A path named in prose: folders of the repository, the package or the front end, then a
#: file with one of the book's extensions (a pattern such as web/<lab>.js is not a path).
PATH = re.compile(r"(?<![\w./<-])((?:[\w.-]+/)+[\w.-]+\.(?:py|js|mjs|cjs|md|css|json|ipynb|txt|toml|yml))\b")
#: Where a path's first folder is: the repository, the package, or the front end's sources.
BASES = {**dict.fromkeys(("tests", "src", "_ext", "docs", "benchmarks", "chapters", ".ci"), ROOT),
         **dict.fromkeys(("scenes", "controls", "plots", "web_export", "web", "data"), PACKAGE),
         **dict.fromkeys(("labs", "shared", "panels", "entries"), WEB_SRC)}


def header(path: Path) -> str:
    """A module's header: its docstring (Python) or its leading comment lines (JS, CSS)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return ast.get_docstring(ast.parse(text)) or ""
    lines = []
    for line in text.splitlines():
        if not line.lstrip().startswith(("//", "/*", "*")):
            break
        lines.append(line)
    return "\n".join(lines)


def documents() -> dict[str, str]:
    """What is checked: the README, the docs, and every hand-written module's header."""
    out = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    out.update({p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
                for p in (ROOT / "docs").glob("*.md")})
    modules = [*PACKAGE.rglob("*.py"), *WEB_SRC.rglob("*.js"), *(ROOT / "_ext").rglob("*.py"),
               *(ROOT / "_ext").rglob("*.js"), *(ROOT / "_ext").rglob("*.css"),
               *(ROOT / "tests").glob("*.py"), *(ROOT / "tests" / "js").glob("*.mjs"),
               *(ROOT / "benchmarks").glob("*.py"), PACKAGE / "web" / "build.mjs",
               PACKAGE / "web" / "present.cjs", PACKAGE / "web" / "lab.css"]
    out.update({p.relative_to(ROOT).as_posix(): header(p) for p in modules
                if "__pycache__" not in p.parts})
    return out


def dangling(text: str, folder: Path = ROOT) -> list[str]:
    """The paths ``text`` (a document in ``folder``) names that do not exist, from the
    repository, the package, the front end's sources or the document's own folder."""
    missing = []
    for name in PATH.findall(text):
        base = BASES.get(name.split("/")[0])
        if base is not None and not any((b / name).exists() for b in (base, ROOT, folder)):
            missing.append(name)
    return missing


def test_every_path_the_docs_name_exists():
    docs = documents()
    assert len(docs) > 100 and "docs/architecture.md" in docs
    missing = {where: found for where, text in docs.items()
               if (found := dangling(text, (ROOT / where).parent))}
    assert not missing, missing


def test_the_path_check_can_fail():
    assert dangling("see tests/test_accessibility.py and web/src/labs/embedding.js") == [
        "tests/test_accessibility.py"]
    assert dangling("`scenes/core.py`, `labs/nope.js`, web/<lab>.js") == ["labs/nope.js"]


def private_imports(path: Path) -> list[str]:
    """Where module ``path`` reads another module's private name (``from m import _x``,
    ``m._x``); a module's own names and ``__dunder__`` names are not counted."""
    tree, found, modules = ast.parse(path.read_text(encoding="utf-8")), [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modules.update(a.asname or a.name for a in node.names)
            found += [f"{path.name}:{node.lineno} from {node.module} import {a.name}"
                      for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
        elif isinstance(node, ast.Import):
            modules.update((a.asname or a.name).split(".")[0] for a in node.names)
    found += [f"{path.name}:{node.lineno} {node.value.id}.{node.attr}" for node in ast.walk(tree)
              if isinstance(node, ast.Attribute) and node.attr.startswith("_")
              and not node.attr.startswith("__") and isinstance(node.value, ast.Name)
              and node.value.id in modules]
    return found


def test_no_module_imports_another_s_private_name():
    """The package, the build's extensions and the benchmarks use each other's public names
    only (a test may read the internals of the module it tests)."""
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "_ext").glob("*.py"), *(ROOT / "benchmarks").glob("*.py")]
    assert len(files) > 50
    assert [hit for path in files for hit in private_imports(path)] == []


def test_the_private_import_check_can_fail(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from a import _b, c\nimport d\nd._e\nself._f\n")
    assert private_imports(module) == ["m.py:1 from a import _b", "m.py:3 d._e"]

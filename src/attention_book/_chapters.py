"""How the scenes and pictures packages find their chapter modules (no registry by hand)."""

import importlib
import pkgutil

#: Names a chapter module keeps to itself: its registries, which the packages merge.
_REGISTRIES = ("SCENE", "SCENES")


def chapter_modules(package: str, path, namespace: dict) -> list:
    """Import every module of ``package`` but ``core``, re-export the names in each one's
    ``__all__`` into ``namespace`` (appending them to its ``__all__``), and return them."""
    modules = []
    for info in pkgutil.iter_modules(path):
        if info.name == "core":
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        names = [n for n in getattr(module, "__all__", ()) if n not in _REGISTRIES]
        namespace.update({n: getattr(module, n) for n in names})
        namespace["__all__"] += names
        modules.append(module)
    return modules

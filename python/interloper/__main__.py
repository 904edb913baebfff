"""`python3 -m interloper COMMAND FILE.py [options]`: the interloper command line over the
assets a Python file defines, as `interloper COMMAND pipeline.yaml` runs a YAML pipeline.

The file is imported as a module. Its DAG is the first module-level interloper.DAG it defines,
else one made of its sources and of its assets that belong to no source.

`python3 -m interloper COMMAND pipeline.yaml [options]` runs a YAML pipeline whose assets may
have a `python: module:function` body: the C++ loader reads the file and asks
resolve_python_target for each such function.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

from interloper import _core
from interloper._assets import DAG, Asset, Source, _parameters

PIPELINE_SUFFIXES = (".yaml", ".yml")


def load_module(path: str):
    file = pathlib.Path(path).resolve()
    if not file.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    sys.path.insert(0, str(file.parent))
    spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[file.stem] = module
    spec.loader.exec_module(module)
    return module


_loaded_files: dict[str, object] = {}


def import_target(module: str, directory: str):
    """The module a `python:` target names: a .py file's absolute path (imported once per
    process), or a module name looked for in the pipeline's directory, then on sys.path."""
    if module.endswith(".py"):
        if module not in _loaded_files:
            _loaded_files[module] = load_module(module)
        return _loaded_files[module]
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return importlib.import_module(module)


def resolve_python_target(asset: str, module: str, function: str, directory: str,
                          deps: list[str]):
    """What the loader needs of a `python:` asset: (function, Asset or None, pass_self, inputs).
    The target is a function written as for @asset, or an Asset whose function is used."""
    value = import_target(module, directory)
    for part in function.split("."):
        if not hasattr(value, part):
            raise AttributeError(f"{getattr(value, '__name__', value)!s} has no attribute '{part}'")
        value = getattr(value, part)
    owner = value if isinstance(value, Asset) else None
    if owner is not None:
        value = owner.function
    if not callable(value):
        raise TypeError(f"{function} is not callable: {value!r:.60}")
    pass_self, inputs = _parameters(value, asset)
    unknown = [name for name in inputs if name not in deps]
    if unknown:
        raise TypeError(f"parameter '{unknown[0]}' of {function} names no dependency of the "
                        f"asset (deps: {', '.join(deps) or 'none'}); declare it in deps or give "
                        "it a default")
    return value, owner, pass_self, inputs


def dag_of(module) -> DAG:
    """The module's DAG, or one of its sources and loose assets, in definition order."""
    values = list(vars(module).values())
    for value in values:
        if isinstance(value, DAG):
            return value
    sources = [v for v in values if isinstance(v, Source)]
    loose = [v for v in values if isinstance(v, Asset) and v.source is None]
    if not sources and not loose:
        raise ValueError(f"{module.__file__} defines no assets")
    return DAG(*sources, *loose)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    files = [i for i, a in enumerate(args)
             if a.endswith((".py", *PIPELINE_SUFFIXES)) and not a.startswith("-")]
    if not files:
        print("usage: python3 -m interloper COMMAND FILE.py|PIPELINE.yaml [options]  "
              "(see COMMAND --help)", file=sys.stderr)
        return 2
    if args[files[0]].endswith(PIPELINE_SUFFIXES):
        return _core.cli_main(["interloper", *args], None, resolve_python_target)
    path = args.pop(files[0])
    try:
        dag = dag_of(load_module(path))
    except Exception as error:  # the file could not be loaded: bad input, as for a pipeline
        print(f"interloper: error: {path}: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    return _core.cli_main([pathlib.Path(path).name, *args], dag)

if __name__ == "__main__":
    sys.exit(main())

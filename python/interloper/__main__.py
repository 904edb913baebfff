"""`python3 -m interloper COMMAND FILE.py [options]`: the interloper command line over the
assets a Python file defines, as `interloper COMMAND pipeline.yaml` runs a YAML pipeline.

The file is imported as a module. Its DAG is the first module-level interloper.DAG it defines,
else one made of its sources and of its assets that belong to no source.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

from interloper import _core
from interloper._assets import DAG, Asset, Source


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
    files = [i for i, a in enumerate(args) if a.endswith(".py") and not a.startswith("-")]
    if not files:
        print("usage: python3 -m interloper COMMAND FILE.py [options]  (see COMMAND --help)",
              file=sys.stderr)
        return 2
    path = args.pop(files[0])
    try:
        dag = dag_of(load_module(path))
    except Exception as error:  # the file could not be loaded: bad input, as for a pipeline
        print(f"interloper: error: {path}: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    return _core.cli_main([pathlib.Path(path).name, *args], dag)


if __name__ == "__main__":
    sys.exit(main())

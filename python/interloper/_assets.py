"""Assets, sources and DAGs written in Python.

The decorators only collect settings; the engine (interloper._core) validates, runs, writes and
records. An asset's function takes the execution context (and `self`, the Asset, when its first
parameter is called so); every other parameter is named after an upstream asset and receives
that asset's rows for the partitions the run reads.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Callable, Iterable, Mapping, Sequence

from interloper import _core

DEFAULT_DESTINATION = "sqlite:.interloper/data.db"
DEFAULT_STORE = ".interloper/state.db"

_destinations: dict[str, _core.Destination] = {}
_stores: dict[str, _core.Store] = {}


def _absolute(url: str) -> str:
    """A sqlite: or file: URL, or a store's path, made absolute against the current directory,
    so that every use of the same file shares one opened destination or store."""
    for scheme in ("sqlite", "file"):
        if url.startswith(scheme + ":"):
            rest = url[len(scheme) + 1:]
            if rest.startswith("//"):
                rest = rest[2:]
            path, query = (rest.split("?", 1) + [""])[:2]
            if not path:
                return url
            return f"{scheme}://{os.path.abspath(path)}" + (f"?{query}" if query else "")
    if ":" not in url.split("/")[0]:
        return os.path.abspath(url)
    return url


def destination(url: str | _core.Destination | None) -> _core.Destination | None:
    """The destination a URL names (sqlite:, file:, postgresql://, s3://, memory://). The same
    URL (the same file, for relative paths) gives the same destination, opened once per process,
    except memory://, which is new each time. A Destination is returned as it is; None stays
    None."""
    if url is None or isinstance(url, _core.Destination):
        return url
    if not isinstance(url, str):
        raise TypeError(f"destination must be a URL str or a Destination, not {type(url).__qualname__}")
    key = _absolute(url)
    if key.startswith("memory:"):
        return _core.open_destination(key)  # each its own: nothing outlives its users
    if key not in _destinations:
        _destinations[key] = _core.open_destination(key)
    return _destinations[key]


def store(url: str | _core.Store | None = None) -> _core.Store:
    """The materialization store at `url` (a SQLite path by default .interloper/state.db in the
    current directory, a postgresql:// URL, or memory://), opened once per process."""
    if isinstance(url, _core.Store):
        return url
    url = DEFAULT_STORE if url is None else url
    if not isinstance(url, str):
        raise TypeError(f"store must be a path or URL str, not {type(url).__qualname__}")
    key = url if url.startswith(("postgres", "memory:")) else _absolute(url)
    if key not in _stores:
        _stores[key] = _core.open_store(key)
    return _stores[key]


_destination = destination
_store = store


class Dep:
    """A dependency that says which partitions of its upstream it reads.

    ``Dep("balances", offset=-1)`` reads the partition before (yesterday for days; an asset may
    read itself this way), ``Dep("events", window="-6..0")`` (or ``window=(-6, 0)``) the
    partition and the six before, ``Dep("fx", all=True)`` every partition. A plain name in
    ``deps`` reads the overlapping partitions. Offsets and windows count partitions of the
    upstream's time partitioning and stop at its start."""

    def __init__(self, asset: str, *, offset: int | None = None,
                 window: str | tuple[int, int] | None = None, all: bool = False) -> None:
        if not isinstance(asset, str):
            raise TypeError(f"Dep(): argument 'asset' must be an asset name, not "
                            f"{type(asset).__qualname__}")
        if sum(x is not None and x is not False for x in (offset, window, all or None)) > 1:
            raise ValueError(f"Dep('{asset}'): give one of offset, window or all")
        self.asset = asset
        if offset is not None:
            if isinstance(offset, bool) or not isinstance(offset, int):
                raise TypeError(f"Dep('{asset}'): offset must be an int, not "
                                f"{type(offset).__qualname__}")
            self.mapping = _core.DepMapping.offset(offset)
        elif isinstance(window, str):
            self.mapping = _core.DepMapping.parse_window(window)
        elif window is not None:
            self.mapping = _core.DepMapping.window(*window)
        elif all:
            self.mapping = _core.DepMapping.all()
        else:
            self.mapping = _core.DepMapping()

    def __repr__(self) -> str:
        return f"Dep({self.asset!r}, {self.mapping})"


class Asset:
    """An asset defined by a Python function; made by @asset."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        partitioning: _core.PartitionConfig | None = None,
        deps: Sequence[str | Dep] = (),
        destination: str | _core.Destination | None = None,
        schema: Mapping[str, Any] | None = None,
        enabled: bool = True,
        version: str = "",
    ) -> None:
        if not callable(function):
            raise TypeError(f"asset(): expected a function, not {type(function).__qualname__}")
        if partitioning is not None and not isinstance(partitioning, _core.PartitionConfig):
            raise TypeError("asset(): argument 'partitioning' must be a PartitionConfig, not "
                            f"{type(partitioning).__qualname__}")
        if isinstance(deps, str) or not all(isinstance(d, (str, Dep)) for d in deps):
            raise TypeError("asset(): argument 'deps' must be a list of asset names or il.Dep")
        self.mappings = [(d.asset, d.mapping) for d in deps if isinstance(d, Dep)]
        deps = [d.asset if isinstance(d, Dep) else d for d in deps]
        self.function = function
        self.name = name or function.__name__
        self.partitioning = partitioning
        self.destination = destination
        self.schema = dict(schema) if schema is not None else None
        self.enabled = enabled
        self.version = version
        self.source: Source | None = None
        self._default_destination: _core.Destination | None = None  # of its last DAG
        self._pass_self, self.inputs = _parameters(function, self.name)
        self.deps = list(dict.fromkeys([*deps, *self.inputs]))
        self.__doc__ = function.__doc__
        self.__wrapped__ = function

    def __repr__(self) -> str:
        return f"<Asset {self.name}>"

    def __call__(self, *args, **kwargs):
        """Calls the function itself, as if it were not decorated."""
        return self.function(*args, **kwargs)

    def _engine(self, default_destination: _core.Destination | None = None) -> _core.EngineAsset:
        return _core.make_asset(
            self.name, self.function, self, self._pass_self, self.inputs, self.partitioning,
            self.deps, destination(self.destination) or default_destination, self.schema,
            self.enabled, self.version, self.mappings)

    def _engine_alone(self) -> _core.EngineAsset:
        """This asset alone, under its source's name and destination when it has a source."""
        owner = self.source or self
        default = owner._default_destination or destination(DEFAULT_DESTINATION)
        if self.source is None:
            return self._engine(default)
        source_destination = destination(self.source.destination) or default
        return _core.EngineSource(self.source.name, source_destination, [self._engine()]).assets()[0]

    def run(self, window=None) -> list[dict]:
        """Computes the rows for `window` (a window or a partition) without writing them."""
        return self._engine_alone().run(window)

    def materialize(self, window=None) -> int:
        """Computes and writes the rows for `window`; returns the number of rows written."""
        return self._engine_alone().materialize(window)

    def read(self, window=None) -> list[dict]:
        """The rows stored for `window` (every row when None), in the asset's destination: its
        own, its source's, or the default of the last DAG it was part of."""
        return self._engine_alone().read(window)


def _parameters(function: Callable[..., Any], name: str) -> tuple[bool, list[str]]:
    """Whether the function takes `self` first, and the parameters that receive upstream rows."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False, []
    pass_self = bool(parameters) and parameters[0].name == "self"
    if pass_self:
        parameters = parameters[1:]
    if not parameters:
        raise TypeError(f"asset '{name}': the function must take the execution context")
    inputs = []
    for p in parameters[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is not p.empty:
            continue
        inputs.append(p.name)
    return pass_self, inputs


def asset(function: Callable[..., Any] | None = None, **settings: Any):
    """Makes a function an asset: `@asset` or `@asset(partitioning=..., name=..., deps=...,
    destination=..., schema=...)`. The function takes the execution context (after `self` when
    its first parameter is so named) and returns rows: a list or any iterable of dicts (a
    generator streams), or a pandas DataFrame. A parameter named after another asset receives
    that asset's rows for the partitions the run reads."""
    if function is not None:
        return Asset(function, **settings)
    return lambda f: Asset(f, **settings)


class Source:
    """A named group of assets sharing a destination; made by @source or directly."""

    def __init__(self, name: str, assets: Iterable[Asset], *,
                 destination: str | _core.Destination | None = None) -> None:
        self.name = name
        self.destination = destination
        self.assets = list(assets)
        self._default_destination: _core.Destination | None = None  # of its last DAG
        for a in self.assets:
            if not isinstance(a, Asset):
                raise TypeError(f"source '{name}': {a!r} is not an asset (decorate it with @il.asset)")
            a.source = self

    def __repr__(self) -> str:
        return f"<Source {self.name}: {', '.join(a.name for a in self.assets)}>"

    def __iter__(self):
        return iter(self.assets)

    def _engine(self, default_destination: _core.Destination | None) -> _core.EngineSource:
        engines = [a._engine() for a in self.assets]
        return _core.EngineSource(self.name, destination(self.destination) or default_destination, engines)


def source(function: Callable[..., Any] | None = None, *, name: str | None = None,
           destination: str | _core.Destination | None = None):
    """Groups the assets a function returns (a list, or a dict of them) into a Source named
    after the function: `@source` or `@source(name=..., destination=...)`."""
    def make(f: Callable[..., Any]) -> Source:
        made = f()
        assets = made.values() if isinstance(made, Mapping) else made
        return Source(name or f.__name__, assets, destination=destination)
    return make(function) if function is not None else make


def _defined_in(items) -> str:
    """The file name the run history files a DAG's runs under: where its first asset's function
    is defined (as `python3 -m interloper runs FILE.py` names it), else "python"."""
    for item in items:
        for a in (item.assets if isinstance(item, Source) else [item]):
            code = getattr(a.function, "__code__", None)
            if code is not None and not code.co_filename.startswith("<"):
                return os.path.basename(code.co_filename)
    return "python"


class DAG:
    """Assets and sources wired by name. Building it checks the wiring (DagError for an unknown
    dependency, a cycle or an incompatible edge). Assets without a destination of their own or
    of their source write to `destination` (SQLite in .interloper/data.db by default); runs are
    recorded in `store` (.interloper/state.db), the store the command line reads."""

    def __init__(self, *items: Asset | Source | Iterable[Asset | Source],
                 destination: str | _core.Destination | None = None,
                 store: str | _core.Store | None = None) -> None:
        flat: list[Asset | Source] = []
        for item in items:
            if isinstance(item, (Asset, Source)):
                flat.append(item)
            elif isinstance(item, Iterable) and not isinstance(item, (str, bytes)):
                flat.extend(item)
            else:
                raise TypeError(f"DAG(): {item!r} is not an asset or a source")
        self.items = flat
        self._default = _destination(destination or DEFAULT_DESTINATION)
        self._store_url = store
        for item in flat:  # so that asset.read() and asset.run() find what this DAG wrote
            item._default_destination = self._default
        self._history = _defined_in(flat)
        sources = [i._engine(self._default) for i in flat if isinstance(i, Source)]
        loose = [i._engine(self._default) for i in flat if isinstance(i, Asset)]
        self._engine = _core.EngineDag(sources, loose)

    @property
    def assets(self) -> list[str]:
        """Every asset's name, upstreams first."""
        return self._engine.order()

    @property
    def store(self) -> _core.Store:
        return _store(self._store_url)

    def materialize(self, window=None, *, runner: _core.Runner | None = None,
                    assets: Sequence[str] = (), fail_fast: bool = False) -> _core.RunResult:
        """Runs every enabled asset (or `assets`) over `window` (a window or a partition; None
        for unpartitioned assets), upstreams first, and records the outcome in the store.
        Raises PartitionError, before running anything, when some asset cannot serve the
        window; failures of assets are in the result."""
        runner = runner or _core.SerialRunner()
        return runner.run(self, window, assets=list(assets), fail_fast=fail_fast, store=self.store,
                          history=self._history, command_line=f"materialize {window or ''}".strip())

    def backfill(self, window, *, missing: bool = False, concurrency: int = 1,
                 assets: Sequence[str] = (), fail_fast: bool = False) -> _core.BackfillResult:
        """One task per (asset, partition) of `window`, newest first, `concurrency` at a time.
        With missing=True, partitions the store records as materialized are skipped."""
        return _core.backfill(self, window, missing=missing, concurrency=concurrency,
                              assets=list(assets), fail_fast=fail_fast, store=self.store,
                              history=self._history,
                              command_line=f"backfill {window}" + (" --missing" if missing else ""))

    def status(self, asset_name: str, window) -> dict[str, list[str]]:
        """The keys of `window` that are materialized, failed and missing for one asset."""
        return self.store.status(self._engine.asset(asset_name), window)

    def read(self, asset_name: str, window=None) -> list[dict]:
        """The rows an asset has stored for `window` (every row when None)."""
        return self._engine.asset(asset_name).read(window)

    def __repr__(self) -> str:
        return f"<DAG {', '.join(self.assets)}>"

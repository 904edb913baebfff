"""interloper: data assets partitioned by time or by lists of values, on a C++ engine.

    import datetime as dt
    import interloper as il

    @il.asset(partitioning=il.TimePartitionConfig(column="date"))
    def ads_stats(context):
        return [{"date": context.partition_date, "clicks": 12}]

    il.DAG(ads_stats).materialize(il.TimePartition(dt.date(2026, 1, 15)))

Time and partitioning, runners, results and errors are the engine's own types
(interloper._core); the decorators, Asset, Source and DAG only collect settings for it.
"""

from interloper._core import (
    AssetResult,
    BackfillResult,
    ConcurrentRunner,
    DagError,
    DataError,
    Destination,
    DestinationError,
    Error,
    ExecutionContext,
    Filter,
    ListPartition,
    ListPartitionConfig,
    ListPartitionWindow,
    Logger,
    Partition,
    PartitionConfig,
    PartitionError,
    PartitionWindow,
    PipelineError,
    RunError,
    Runner,
    RunResult,
    SerialRunner,
    Store,
    TaskResult,
    TimeGranularity,
    TimePartition,
    TimePartitionConfig,
    TimePartitionWindow,
)
from interloper._assets import DAG, Asset, Dep, Source, asset, destination, source, store

__all__ = [
    "DAG",
    "Asset",
    "AssetResult",
    "BackfillResult",
    "ConcurrentRunner",
    "DagError",
    "DataError",
    "Destination",
    "DestinationError",
    "Dep",
    "Error",
    "ExecutionContext",
    "Filter",
    "ListPartition",
    "ListPartitionConfig",
    "ListPartitionWindow",
    "Logger",
    "Partition",
    "PartitionConfig",
    "PartitionError",
    "PartitionWindow",
    "PipelineError",
    "RunError",
    "RunResult",
    "Runner",
    "SerialRunner",
    "Source",
    "Store",
    "TaskResult",
    "TimeGranularity",
    "TimePartition",
    "TimePartitionConfig",
    "TimePartitionWindow",
    "asset",
    "destination",
    "source",
    "store",
]

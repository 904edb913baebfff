"""The Python package's costs, measured from Python (what binding overhead a user pays).

    cmake --build build --target python_bench          # or:
    PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [--partitions N] [--rows N]

Prints one line per figure:
  chain_memory_us_per_asset_partition  a three-asset daily chain of 10 rows each, serial backfill,
                                       memory destination and store (the Python original's
                                       measure: 3226 us per asset-partition)
  asset_memory_us_per_asset_partition  one asset of 10 rows, serial backfill, memory destination
                                       and store: the engine's and the binding's own cost
  asset_sqlite_us_per_asset_partition  the same into SQLite, recorded in a SQLite store (target
                                       <= 60 us), and the parts the SQLite destination and the
                                       SQLite store take (the engine's, the same for C++ assets)
  rows_sqlite_s / executemany_s        10^6 rows of 5 columns yielded as dicts into SQLite, and
                                       Python's sqlite3 executemany of the same tuples in one
                                       transaction; their ratio (target <= 1.5)
  format_advance_ns                    TimeGranularity.DAY.format(DAY.advance(d, i)) per call;
                                       original_ns: the same two calls on a pure-Python
                                       granularity that works as the specification's library
                                       does (an enum member: advance truncates, then steps by
                                       the granularity's calendar arithmetic; format truncates,
                                       then applies the granularity's strftime pattern), target
                                       >= 5x; plain_datetime_ns: the fastest pure Python for a
                                       day alone, (d + timedelta(days=i)).isoformat()
"""

from __future__ import annotations

import argparse
import datetime as dt
import enum
import os
import sqlite3
import tempfile
import time

import interloper as il

DAY = il.TimePartitionConfig(column="date")
START = dt.date(1990, 1, 1)


def window(partitions: int) -> il.TimePartitionWindow:
    return il.TimePartitionWindow(START, il.TimeGranularity.DAY.advance(START, partitions - 1))


def chain() -> list[il.Asset]:
    @il.asset(partitioning=DAY)
    def raw(context):
        d = context.partition_date
        return [{"date": d, "id": i, "clicks": i * 3} for i in range(10)]

    @il.asset(partitioning=DAY)
    def clean(context, raw):
        return [{"date": r["date"], "id": r["id"], "clicks": r["clicks"] + 1} for r in raw]

    @il.asset(partitioning=DAY)
    def report(context, clean):
        return [{"date": r["date"], "id": r["id"], "share": r["clicks"] / 100} for r in clean]

    return [raw, clean, report]


def ten_rows() -> il.Asset:
    @il.asset(partitioning=DAY)
    def ten(context):
        d = context.partition_date
        return [{"date": d, "id": i, "clicks": i * 3} for i in range(10)]

    return ten


def per_asset_partition(assets, partitions: int, destination: str, store: str) -> float:
    dag = il.DAG(*assets, destination=destination, store=store)
    started = time.perf_counter()
    result = dag.backfill(window(partitions))
    seconds = time.perf_counter() - started
    assert result.ok and result.succeeded == partitions * len(assets), result
    return seconds / (partitions * len(assets)) * 1e6


def rows_into_sqlite(rows: int) -> tuple[float, float]:
    day = dt.date(2026, 1, 1)

    @il.asset(partitioning=DAY)
    def wide(context):
        d = context.partition_date
        for i in range(rows):
            yield {"date": d, "id": i, "name": "item", "price": i * 0.5, "ok": True}

    dag = il.DAG(wide, destination="sqlite:rows.db", store="memory://")
    started = time.perf_counter()
    result = dag.materialize(il.TimePartition(day))
    ours = time.perf_counter() - started
    assert result.ok and result.assets[0].rows == rows, result.error_summary()

    db = sqlite3.connect("executemany.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute('CREATE TABLE wide ("date" TEXT, id INTEGER, name TEXT, price REAL, ok INTEGER)')
    key = day.isoformat()  # the kindest form for sqlite3: no adapter call per row
    started = time.perf_counter()
    with db:
        db.executemany("INSERT INTO wide VALUES (?, ?, ?, ?, ?)",
                       ((key, i, "item", i * 0.5, True) for i in range(rows)))
    theirs = time.perf_counter() - started
    db.close()
    return ours, theirs


class OriginalGranularity(enum.Enum):
    """A pure-Python TimeGranularity as the specification describes it: calendar arithmetic per
    granularity on datetime.date, keys by strftime patterns (the quarter's built by hand)."""

    HOUR = "%Y-%m-%dT%H"
    DAY = "%Y-%m-%d"
    WEEK = "%G-W%V"
    MONTH = "%Y-%m"
    QUARTER = ""
    YEAR = "%Y"

    def truncate(self, t: dt.date) -> dt.date:
        if self is OriginalGranularity.HOUR:
            if not isinstance(t, dt.datetime):
                return dt.datetime(t.year, t.month, t.day)
            return t.replace(minute=0, second=0, microsecond=0)
        if isinstance(t, dt.datetime):
            t = t.date()
        if self is OriginalGranularity.DAY:
            return t
        if self is OriginalGranularity.WEEK:
            return t - dt.timedelta(days=t.weekday())
        if self is OriginalGranularity.MONTH:
            return t.replace(day=1)
        if self is OriginalGranularity.QUARTER:
            return t.replace(month=(t.month - 1) // 3 * 3 + 1, day=1)
        return t.replace(month=1, day=1)

    def advance(self, t: dt.date, n: int) -> dt.date:
        start = self.truncate(t)
        if self is OriginalGranularity.HOUR:
            return start + dt.timedelta(hours=n)
        if self is OriginalGranularity.DAY:
            return start + dt.timedelta(days=n)
        if self is OriginalGranularity.WEEK:
            return start + dt.timedelta(weeks=n)
        months = {OriginalGranularity.MONTH: 1, OriginalGranularity.QUARTER: 3,
                  OriginalGranularity.YEAR: 12}[self]
        year, month = divmod(start.year * 12 + start.month - 1 + n * months, 12)
        return start.replace(year=year, month=month + 1)

    def format(self, t: dt.date) -> str:
        start = self.truncate(t)
        if self is OriginalGranularity.QUARTER:
            return f"{start.year:04d}-Q{(start.month - 1) // 3 + 1}"
        return start.strftime(self.value)


def per_call_ns(calls: int, body) -> float:
    started = time.perf_counter()
    body(calls)
    return (time.perf_counter() - started) / calls * 1e9


def format_advance(calls: int) -> tuple[float, float, float]:
    d = START

    def ours(calls: int) -> None:
        g = il.TimeGranularity.DAY
        for i in range(calls):
            g.format(g.advance(d, i))

    def original(calls: int) -> None:
        g = OriginalGranularity.DAY
        for i in range(calls):
            g.format(g.advance(d, i))

    def plain(calls: int) -> None:
        one = dt.timedelta(days=1)
        for i in range(calls):
            (d + one * i).isoformat()

    assert il.TimeGranularity.DAY.format(il.TimeGranularity.DAY.advance(d, 400)) == \
        OriginalGranularity.DAY.format(OriginalGranularity.DAY.advance(d, 400))
    return per_call_ns(calls, ours), per_call_ns(calls, original), per_call_ns(calls, plain)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    os.chdir(tempfile.mkdtemp(prefix="python_bench."))
    chain_us = per_asset_partition(chain(), args.partitions, "memory://", "memory://")
    print(f"chain_memory_us_per_asset_partition {chain_us:.1f}  (original 3226: {3226 / chain_us:.0f}x)")
    memory_us = per_asset_partition([ten_rows()], args.partitions, "memory://", "memory://")
    print(f"asset_memory_us_per_asset_partition {memory_us:.1f}")
    sqlite_us = per_asset_partition([ten_rows()], args.partitions, "sqlite:data.db", "state.db")
    print(f"asset_sqlite_us_per_asset_partition {sqlite_us:.1f}  (target 60; SQLite writes and "
          f"records take {sqlite_us - memory_us:.1f})")
    write_us = per_asset_partition([ten_rows()], args.partitions, "sqlite:write.db", "memory://")
    record_us = per_asset_partition([ten_rows()], args.partitions, "memory://", "record.db")
    print(f"  of which: SQLite destination {write_us - memory_us:.1f}, SQLite store "
          f"{record_us - memory_us:.1f}")
    ours, theirs = rows_into_sqlite(args.rows)
    print(f"rows_sqlite_s {ours:.2f}  executemany_s {theirs:.2f}  ratio {ours / theirs:.2f}  (target 1.5)")
    ours_ns, original_ns, plain_ns = format_advance(200_000)
    print(f"format_advance_ns {ours_ns:.0f}  original_ns {original_ns:.0f} "
          f"({original_ns / ours_ns:.1f}x, target 5)  plain_datetime_ns {plain_ns:.0f}")


if __name__ == "__main__":
    main()

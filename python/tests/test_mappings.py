"""Dependencies that say which partitions they read: il.Dep with offset, window and all."""

import datetime as dt

import pytest

import interloper as il

START = dt.date(2026, 11, 1)
DAY = il.TimePartitionConfig("date", start=START)


def test_an_asset_reads_its_own_day_before_and_runs_oldest_first(workdir):
    ran = []

    @il.asset(partitioning=DAY, deps=[il.Dep("balances", offset=-1)])
    def balances(context):
        before = context.load("balances")
        ran.append(context.partition.key)
        return [{"date": context.partition_date, "n": i} for i in range(len(before) + 1)]

    dag = il.DAG(balances)
    result = dag.backfill(il.TimePartitionWindow(dt.date(2026, 11, 3), dt.date(2026, 11, 6)),
                          concurrency=3)
    assert result.ok
    # The days before the window run first: the balance needs them.
    assert ran == [f"2026-11-0{d}" for d in range(1, 7)]
    assert len(dag.read("balances", il.TimePartition(dt.date(2026, 11, 6)))) == 6


def test_a_trailing_window_and_yesterday_of_another_asset(workdir):
    @il.asset(partitioning=DAY)
    def events(context):
        return [{"date": context.partition_date, "id": 1}]

    @il.asset(partitioning=DAY, deps=[il.Dep("events", window="-6..0")])
    def rolling(context, events):
        return [{"date": context.partition_date, "n": len(events)}]

    @il.asset(partitioning=DAY, deps=[il.Dep("events", offset=-1)])
    def stats(context, events):
        return [{"date": context.partition_date, "n": len(events)}]

    dag = il.DAG(events, rolling, stats)
    assert dag.backfill(il.TimePartitionWindow(dt.date(2026, 11, 1), dt.date(2026, 11, 10))).ok
    counts = {r["date"].day: r["n"] for r in rolling.read()}
    assert counts[1] == 1 and counts[3] == 3 and counts[10] == 7
    assert {r["date"].day: r["n"] for r in stats.read()}[1] == 0


def test_dep_checks_its_arguments(workdir):
    assert repr(il.Dep("events", window=(-6, 0))) == "Dep('events', window -6..0)"
    assert str(il.Dep("events", all=True).mapping) == "all"
    with pytest.raises(ValueError, match="'-6..x'"):
        il.Dep("events", window="-6..x")
    with pytest.raises(ValueError, match="give one of"):
        il.Dep("events", offset=-1, window="-6..0")
    with pytest.raises(TypeError):
        il.Dep("events", offset="-1")

    @il.asset(partitioning=DAY, deps=[il.Dep("same", offset=0)])
    def same(context):
        return []

    with pytest.raises(il.DagError, match="cycle"):
        il.DAG(same)

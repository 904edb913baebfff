"""Every code block of the partitioning specification, as written, with the `fetch_*` helpers
(and the names the blocks leave to the reader: source, a, b, start, end) defined here."""

import datetime as dt

import pytest

import interloper as il


def fetch_stats(start, end=None):
    """One row for a day, or one row per day of a range, each with its date."""
    if end is None:
        return [{"campaign": "spring", "clicks": 10}]
    days = (end - start).days + 1
    return [{"date": start + dt.timedelta(days=d), "campaign": "spring", "clicks": d} for d in range(days)]


def fetch_sales(region):
    return [{"amount": 12.5, "currency": "EUR" if region == "eu" else "USD"}]


def test_time_partitioning_block(workdir):
    @il.asset(partitioning=il.TimePartitionConfig(column="date"))
    def ads_stats(self, context: il.ExecutionContext) -> list[dict]:
        date = context.partition_date
        rows = fetch_stats(date)
        for row in rows:
            row["date"] = date
        return rows

    @il.source
    def source():
        return [ads_stats]

    result = il.DAG(source).materialize(il.TimePartition(dt.date(2026, 1, 15)))
    assert result.ok, result.error_summary()
    assert ads_stats.read() == [{"campaign": "spring", "clicks": 10, "date": dt.date(2026, 1, 15)}]


def test_granularity_block():
    a, b = dt.date(2026, 1, 20), dt.date(2026, 5, 2)
    start, end = dt.date(2026, 1, 31), dt.date(2026, 3, 1)
    g = il.TimeGranularity.MONTH
    assert g.truncate(dt.date(2026, 5, 20)) == dt.date(2026, 5, 1)          # 2026-05-01, the period start
    assert g.advance(dt.date(2026, 5, 1), -1) == dt.date(2026, 4, 1)        # 2026-04-01
    assert g.bounds(dt.date(2026, 5, 20)) == (dt.date(2026, 5, 1), dt.date(2026, 6, 1))  # half-open
    assert g.periods_between(a, b) == 4                                     # whole periods from a to b
    assert g.format(dt.date(2026, 5, 20)) == "2026-05"                      # "2026-05"
    assert g.parse("2026-05") == dt.date(2026, 5, 1)                        # 2026-05-01
    assert list(g.period_range(start, end)) == [dt.date(2026, m, 1) for m in (1, 2, 3)]
    assert il.TimePartition.from_key("2026-08").granularity == il.TimeGranularity.MONTH


def test_partitions_and_windows_block():
    rows = [{"date": dt.date(2026, 5, 3)}, {"date": dt.date(2026, 6, 3)}]
    partition = il.TimePartition(dt.date(2026, 5, 20), il.TimeGranularity.MONTH)
    assert partition.value == dt.date(2026, 5, 1)          # 2026-05-01, normalized to the period start
    assert partition.key == "2026-05"            # "2026-05"
    assert partition.bounds == (dt.date(2026, 5, 1), dt.date(2026, 6, 1))         # (2026-05-01, 2026-06-01)
    assert len(partition.window) == 1         # the one-partition window
    assert partition.filter("date").column == "date"  # the bounds, as a database selects them
    assert partition.slice(rows, "date") == rows[:1]   # the rows inside the bounds

    window = il.TimePartitionWindow(dt.date(2026, 1, 1), dt.date(2026, 1, 7))
    assert str(window) == "2026-01-01..2026-01-07"              # "2026-01-01..2026-01-07"; "2026-01-01" for a window of one
    assert len(window) == 7             # 7
    assert len(list(window)) == 7       # TimePartition per day, oldest first
    assert window.bounds == (dt.date(2026, 1, 1), dt.date(2026, 1, 8))            # (2026-01-01, 2026-01-08)
    with pytest.raises(ValueError):
        il.TimePartitionWindow(dt.date(2026, 1, 7), dt.date(2026, 1, 1))


def test_list_partitioning_block(workdir):
    @il.asset(partitioning=il.ListPartitionConfig(column="region", values=["eu", "us", "apac"]))
    def sales(self, context: il.ExecutionContext) -> list[dict]:
        region = context.partition.value
        return [{"region": region, **row} for row in fetch_sales(region)]

    config = sales.partitioning
    assert config.window("eu", "us").keys() == ["eu", "us"]
    assert sales.run(config.partition("us")) == [{"region": "us", "amount": 12.5, "currency": "USD"}]
    dag = il.DAG(sales)
    for key in ["eu", "us", "apac"]:
        assert dag.materialize(config.partition(key)).ok
    assert sorted(r["region"] for r in sales.read()) == ["apac", "eu", "us"]


def test_windowed_assets_block(workdir):
    @il.asset(partitioning=il.TimePartitionConfig(column="date", allow_window=True))
    def ads_stats(self, context: il.ExecutionContext) -> list[dict]:
        window = context.window
        return fetch_stats(window.start, window.end)

    window = il.TimePartitionWindow(dt.date(2026, 1, 1), dt.date(2026, 1, 7))
    result = il.DAG(ads_stats).materialize(window)
    assert result.ok and result.assets[0].rows == 7
    assert il.DAG(ads_stats).materialize(il.TimePartition(dt.date(2026, 1, 3))).ok  # a window of one


def test_a_window_run_fails_as_a_whole_when_an_asset_does_not_allow_windows(workdir):
    @il.asset(partitioning=il.TimePartitionConfig(column="date"))
    def daily(context):
        return [{"date": context.partition_date}]

    window = il.TimePartitionWindow(dt.date(2026, 1, 1), dt.date(2026, 1, 7))
    with pytest.raises(il.PartitionError, match="asset 'daily'") as raised:
        il.DAG(daily).materialize(window)
    assert raised.value.asset == "daily"
    assert daily.read() == []

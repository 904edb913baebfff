"""Python assets on the engine: rows in and out, upstream rows, errors, streaming and runners."""

import datetime as dt
import decimal
import sqlite3
import threading
import time

import pytest

import interloper as il

DAY = il.TimePartitionConfig(column="date")
JAN = il.TimePartitionWindow(dt.date(2026, 1, 1), dt.date(2026, 1, 5))


def test_values_round_trip_through_sqlite(workdir):
    utc = dt.timezone.utc
    row = {"date": dt.date(2026, 1, 2), "i": -(2**63), "f": 0.1, "s": "é\"'; DROP", "b": True,
           "n": None, "ts": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=utc)}

    @il.asset(partitioning=DAY)
    def values(context):
        return [dict(row)]

    @il.asset(partitioning=DAY)
    def copy(context, values):
        return values

    dag = il.DAG(values, copy)
    assert dag.materialize(il.TimePartition(dt.date(2026, 1, 2))).ok
    assert values.read() == [row]
    assert copy.read() == [row]
    berlin = dt.datetime(2026, 1, 2, 4, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert copy.read()[0]["ts"] == berlin  # aware datetimes are instants


def test_upstream_rows_by_parameter_and_by_load(workdir):
    @il.asset(partitioning=DAY)
    def orders(context):
        return [{"date": context.partition_date, "amount": a} for a in (1, 2, 3)]

    @il.asset(partitioning=il.TimePartitionConfig("date", granularity=il.TimeGranularity.MONTH), deps=["orders"])
    def monthly(context):
        rows = context.load("orders")
        return [{"date": context.partition.value, "total": sum(r["amount"] for r in rows), "n": len(rows)}]

    @il.asset(partitioning=DAY)
    def doubled(self, context, orders):
        assert self is doubled and context.asset is doubled and context.asset_name == "doubled"
        return [{**r, "amount": r["amount"] * 2} for r in orders]

    dag = il.DAG(orders, monthly, doubled)
    assert dag.assets[0] == "orders"
    january = il.TimePartition(dt.date(2026, 1, 1), il.TimeGranularity.MONTH)
    assert dag.backfill(january, assets=["orders", "doubled"]).ok
    assert dag.materialize(january, assets=["monthly"]).ok
    assert monthly.read() == [{"date": dt.date(2026, 1, 1), "total": 186, "n": 93}]
    assert sum(r["amount"] for r in doubled.read()) == 372


def test_a_generator_streams_in_batches(workdir):
    seen = []

    @il.asset(partitioning=DAY)
    def big(context):
        for i in range(20000):
            seen.append(i)
            yield {"date": context.partition_date, "i": i}

    assert big.materialize(il.TimePartition(dt.date(2026, 1, 1))) == 20000
    assert len(big.read()) == 20000


def test_an_exception_fails_the_task_with_its_type_message_and_line(workdir):
    @il.asset(partitioning=DAY)
    def broken(context):
        if context.partition_date.day == 3:
            raise KeyError("no data for day 3")  # the line the error names
        return [{"date": context.partition_date}]

    line = broken.function.__code__.co_firstlineno + 3
    result = il.DAG(broken).backfill(JAN)
    assert result.succeeded == 4 and result.failed == 1 and not result.ok
    error = result.failures[0].error
    assert "KeyError" in error and "no data for day 3" in error
    assert f"line {line}, in broken" in error and "test_assets.py" in error
    assert il.DAG(broken).status("broken", JAN)["failed"] == ["2026-01-03"]
    run = il.DAG(broken).materialize(il.TimePartition(dt.date(2026, 1, 3)))
    assert not run.ok and "KeyError" in run.asset("broken").error


def test_a_generator_failing_halfway_keeps_the_previous_rows(workdir):
    fail = {"now": False}

    @il.asset(partitioning=DAY)
    def events(context):
        for i in range(10000):
            if fail["now"] and i == 9000:
                raise RuntimeError("source went away")
            yield {"date": context.partition_date, "i": i}

    day = il.TimePartition(dt.date(2026, 1, 1))
    assert events.materialize(day) == 10000
    fail["now"] = True
    with pytest.raises(il.RunError, match="RuntimeError: source went away"):
        events.materialize(day)
    assert len(events.read(day)) == 10000


@pytest.mark.parametrize("rows,error", [
    ([["not", "a", "dict"]], "TypeError: row 1 is a list"),
    ([{"date": dt.date(2026, 1, 1)}, 5], "row 2 is a int"),
    (42, "returned a int"),
    ({"date": dt.date(2026, 1, 1)}, "returned a dict"),
    ([{"date": dt.date(2026, 1, 1), "big": 2**64}], "column 'big'"),
    ([{"date": dt.date(2026, 1, 1), "d": object()}], "column 'd': a object"),
    ([{"date": dt.date(2026, 1, 1), 7: 1}], "the key 7 is not a str"),
    ([{"date": dt.date(2026, 1, 1), "d": decimal.Decimal("NaN")}], "column 'd': Decimal('NaN') is not a finite"),
    ([{"date": dt.date(2026, 1, 1), "d": decimal.Decimal("1e40")}], "has more than 38 digits"),
    ([{"date": dt.date(2026, 1, 1), "j": [float("inf")]}], "column 'j': [inf] is not JSON"),
    ([{"other": 1}], "date"),
    ([{"date": dt.date(2026, 2, 1)}], "2026-02-01"),
])
def test_bad_rows_fail_the_asset_and_write_nothing(workdir, rows, error):
    @il.asset(partitioning=DAY)
    def bad(context):
        return rows

    result = il.DAG(bad).materialize(il.TimePartition(dt.date(2026, 1, 1)))
    assert not result.ok
    assert error in result.asset("bad").error
    assert bad.read() == []


def test_wrong_arguments(workdir):
    with pytest.raises(TypeError, match="partitioning"):
        il.asset(partitioning="date")(lambda context: [])
    with pytest.raises(TypeError, match="must take the execution context"):
        il.asset(lambda: [])
    with pytest.raises(TypeError, match="argument 'window'"):
        il.DAG(il.asset(lambda context: [])).materialize("2026-01-01")
    with pytest.raises(ValueError, match="'2026-13'"):
        DAY.partition("2026-13")
    with pytest.raises(il.DagError, match="unknown asset 'nope'") as raised:
        il.DAG(il.asset(deps=["nope"], name="needy")(lambda context: []))
    assert raised.value.asset == "needy" and raised.value.dependency == "nope"


def test_missing_only_redoes_what_failed_or_is_missing(workdir):
    calls = []
    broken = {"day": 2}

    @il.asset(partitioning=DAY)
    def flaky(context):
        calls.append(context.partition.key)
        if context.partition_date.day == broken["day"]:
            raise ValueError("flaky")
        return [{"date": context.partition_date}]

    dag = il.DAG(flaky)
    first = dag.backfill(JAN)
    assert first.failed == 1
    calls.clear()
    broken["day"] = None
    again = dag.backfill(JAN, missing=True)
    assert again.ok and again.skipped == 4 and calls == ["2026-01-02"]
    assert dag.status("flaky", JAN)["materialized"] == [p.key for p in JAN]


def test_a_concurrent_runner_overlaps_python_assets_that_sleep(workdir):
    def sleeper(name):
        @il.asset(name=name, partitioning=DAY)
        def f(context):
            time.sleep(0.4)
            return [{"date": context.partition_date, "thread": threading.get_ident()}]
        return f

    dag = il.DAG(*[sleeper(f"s{i}") for i in range(4)])
    day = il.TimePartition(dt.date(2026, 1, 1))
    started = time.monotonic()
    assert dag.materialize(day, runner=il.ConcurrentRunner(4)).ok
    assert time.monotonic() - started < 1.2  # serial would take 1.6 s
    started = time.monotonic()
    assert dag.materialize(day, runner=il.SerialRunner()).ok
    assert time.monotonic() - started >= 1.6


def test_sources_group_assets_under_a_destination(workdir):
    @il.source(destination="file:" + str(workdir / "files"))
    def shop():
        @il.asset(partitioning=DAY)
        def orders(context):
            return [{"date": context.partition_date, "n": 1}]

        @il.asset
        def customers(context):
            return [{"name": "ada"}]
        return [orders, customers]

    assert [a.name for a in shop.assets] == ["orders", "customers"]
    dag = il.DAG(shop)
    assert dag.materialize(il.TimePartition(dt.date(2026, 1, 1)), assets=["orders"]).ok
    assert dag.materialize(assets=["customers"]).ok
    assert (workdir / "files" / "shop" / "orders" / "date=2026-01-01" / "data.jsonl").exists()
    assert dag.read("customers") == [{"name": "ada"}]


def test_the_default_destination_is_sqlite_in_the_current_directory(workdir):
    @il.asset(partitioning=DAY)
    def plain(context):
        return [{"date": context.partition_date, "x": 1}]

    assert il.DAG(plain).materialize(il.TimePartition(dt.date(2026, 1, 1))).ok
    db = sqlite3.connect(workdir / ".interloper" / "data.db")
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    assert any("plain" in t for t in tables)
    assert (workdir / ".interloper" / "state.db").exists()


def test_the_context_is_not_usable_after_the_asset_returned(workdir):
    kept = []

    @il.asset(partitioning=DAY)
    def keeper(context):
        kept.append(context)
        context.logger.info("hello")
        return []

    keeper.run(il.TimePartition(dt.date(2026, 1, 1)))
    with pytest.raises(il.RunError, match="after its asset returned"):
        kept[0].partition


def test_the_context_logger_writes_to_python_logging(workdir, caplog):
    @il.asset(partitioning=DAY)
    def talker(context):
        context.logger.info(f"fetching {context.partition.key}")
        context.logger.warning("slow source")
        return []

    with caplog.at_level("INFO", logger="interloper"):
        assert il.DAG(talker).materialize(il.TimePartition(dt.date(2026, 1, 1))).ok
        talker.run(il.TimePartition(dt.date(2026, 1, 2)))
    messages = [(r.levelname, r.getMessage(), r.asset) for r in caplog.records if r.name == "interloper"]
    assert ("INFO", "talker: fetching 2026-01-01", "talker") in messages
    assert ("WARNING", "talker: slow source", "talker") in messages
    assert ("INFO", "talker: fetching 2026-01-02", "talker") in messages


def test_a_pandas_data_frame_is_rows(workdir):
    pd = pytest.importorskip("pandas")

    @il.asset(partitioning=DAY)
    def frame(context):
        return pd.DataFrame({"date": [context.partition_date] * 3, "x": [1, 2, 3], "y": [0.5, 1.5, 2.5],
                             "name": ["a", "b", "c"]})

    assert frame.materialize(il.TimePartition(dt.date(2026, 1, 1))) == 3
    assert frame.read() == [{"date": dt.date(2026, 1, 1), "x": x, "y": x - 0.5, "name": n}
                            for x, n in [(1, "a"), (2, "b"), (3, "c")]]


def test_assets_logging_at_once_on_a_concurrent_runner_do_not_deadlock(workdir, caplog):
    def chatty(name):
        @il.asset(name=name, partitioning=DAY)
        def f(context):
            for i in range(300):
                context.logger.info(f"line {i}")
            return [{"date": context.partition_date}]
        return f

    dag = il.DAG(*[chatty(f"c{i}") for i in range(4)])
    with caplog.at_level("INFO", logger="interloper"):
        assert dag.materialize(il.TimePartition(dt.date(2026, 1, 1)), runner=il.ConcurrentRunner(4)).ok
        assert dag.backfill(JAN, concurrency=3).ok
    assert len([r for r in caplog.records if r.name == "interloper"]) == 4 * 300 * 6


def test_list_partitions_backfill_and_runners_take_a_bare_partition(workdir):
    regions = il.ListPartitionConfig("region", ["eu", "us", "apac"])

    @il.asset(partitioning=regions)
    def sales(context):
        return [{"region": context.partition.value, "n": len(context.partition.value)}]

    dag = il.DAG(sales)
    everything = regions.window("eu", "apac")
    assert dag.backfill(everything).succeeded == 3
    assert dag.status("sales", everything)["materialized"] == ["eu", "us", "apac"]
    assert dag.backfill(everything, missing=True).skipped == 3
    assert il.SerialRunner().run(dag, regions.partition("us")).ok
    assert il.ConcurrentRunner(2).run(dag, regions.partition("apac"), store=dag.store).ok
    assert sorted((r["region"], r["n"]) for r in sales.read()) == [("apac", 4), ("eu", 2), ("us", 2)]
    with pytest.raises(TypeError, match="argument 'dag'"):
        il.SerialRunner().run("dag", regions.partition("us"))


def test_an_asset_reads_where_its_last_dag_wrote(workdir, monkeypatch):
    @il.asset(partitioning=DAY)
    def kept(context):
        return [{"date": context.partition_date, "x": 1}]

    dag = il.DAG(kept, destination="file:files")
    assert dag.materialize(il.TimePartition(dt.date(2026, 1, 1))).ok
    assert (workdir / "files" / "kept" / "date=2026-01-01" / "data.jsonl").exists()
    assert kept.read() == [{"date": dt.date(2026, 1, 1), "x": 1}]
    other = workdir / "other"
    other.mkdir()
    monkeypatch.chdir(other)  # a relative URL names a file of the current directory
    assert il.destination("file:files").url != dag._default.url
    assert il.destination("memory://") is not il.destination("memory://")

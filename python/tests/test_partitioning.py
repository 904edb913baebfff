"""Partitions, windows and partitionings from Python: the specification's examples and the
error cases of the partitioning contract."""

import datetime as dt
import pickle
from zoneinfo import ZoneInfo

import pytest

import interloper as il

G = il.TimeGranularity


def test_time_partition_as_the_specification_shows_it():
    partition = il.TimePartition(dt.date(2026, 5, 20), il.TimeGranularity.MONTH)
    assert partition.value == dt.date(2026, 5, 1)
    assert partition.key == "2026-05"
    assert partition.bounds == (dt.date(2026, 5, 1), dt.date(2026, 6, 1))
    assert str(partition.window) == "2026-05" and len(partition.window) == 1
    f = partition.filter("date")
    assert f.to_sql() == ('"date" >= ? AND "date" < ?', [dt.datetime(2026, 5, 1), dt.datetime(2026, 6, 1)])
    rows = [{"date": dt.date(2026, 4, 30)}, {"date": dt.date(2026, 5, 1)}, {"date": dt.date(2026, 5, 31)},
            {"date": dt.date(2026, 6, 1)}, {"date": "2026-05-09"}, {"date": None}, {"other": 1}]
    assert partition.slice(rows, "date") == [rows[1], rows[2], rows[4]]
    assert il.TimePartition.from_key("2026-08") == il.TimePartition(dt.date(2026, 8, 1), G.MONTH)
    assert il.TimePartition.from_key("2026-08").granularity == G.MONTH
    assert il.TimePartition(dt.date(2026, 1, 15)).granularity == G.DAY


def test_time_window_as_the_specification_shows_it():
    window = il.TimePartitionWindow(dt.date(2026, 1, 1), dt.date(2026, 1, 7))
    assert str(window) == "2026-01-01..2026-01-07"
    assert len(window) == 7
    days = list(window)
    assert [p.key for p in days] == [f"2026-01-0{d}" for d in range(1, 8)]
    assert all(isinstance(p, il.TimePartition) for p in days)
    assert window.bounds == (dt.date(2026, 1, 1), dt.date(2026, 1, 8))
    assert str(il.TimePartitionWindow(dt.date(2026, 1, 1), dt.date(2026, 1, 1))) == "2026-01-01"
    assert window.start == dt.date(2026, 1, 1) and window.end == dt.date(2026, 1, 7)
    assert days[2] in window and il.TimePartition(dt.date(2026, 2, 1)) not in window
    assert window[-1].key == "2026-01-07"
    assert window.keys()[0] == "2026-01-01"
    assert pickle.loads(pickle.dumps(window)) == window
    assert eval("il." + repr(window)) == window
    assert eval("il." + repr(days[0])) == days[0]


def test_a_window_ending_before_it_starts_raises_value_error():
    with pytest.raises(ValueError):
        il.TimePartitionWindow(dt.date(2026, 1, 7), dt.date(2026, 1, 1))


def test_hour_partitions_are_naive_utc_labels():
    p = il.TimePartition(dt.datetime(2026, 5, 20, 13, 45), G.HOUR)
    assert p.key == "2026-05-20T13" and p.value == dt.datetime(2026, 5, 20, 13)
    assert p.bounds == (dt.datetime(2026, 5, 20, 13), dt.datetime(2026, 5, 20, 14))


def test_lookback_with_aware_datetimes_in_zoneinfo_zones():
    W = il.TimePartitionWindow
    berlin = ZoneInfo("Europe/Berlin")
    # 2026-03-29 is 23 hours long in Berlin; 00:30 local on the 30th is still 22:30 UTC the 29th.
    now = dt.datetime(2026, 3, 30, 0, 30, tzinfo=berlin)
    assert str(W.lookback(now, 2, 0, G.DAY)) == "2026-03-29..2026-03-30"
    assert str(W.lookback(now.astimezone(dt.timezone.utc), 2, 0, G.DAY)) == "2026-03-28..2026-03-29"
    assert str(W.lookback(now, 2, 0, G.DAY, time_zone="UTC")) == "2026-03-28..2026-03-29"
    # Hours stay UTC whatever the zone.
    assert str(W.lookback(now, 1, 0, G.HOUR)) == "2026-03-29T22"
    # Clamped to start; None when nothing is left.
    assert str(W.lookback(now, 10, 1, G.DAY, start=dt.date(2026, 3, 27))) == "2026-03-27..2026-03-29"
    assert W.lookback(now, 3, 1, G.DAY, start=dt.date(2026, 3, 30)) is None
    with pytest.raises(ValueError, match="fixed UTC offset"):
        W.lookback(dt.datetime(2026, 3, 30, tzinfo=dt.timezone(dt.timedelta(hours=2))), 1)
    with pytest.raises(ValueError):
        W.lookback(now, 0)
    with pytest.raises(ValueError, match="'Europe/Atlantis'"):
        W.lookback(now, 1, time_zone="Europe/Atlantis")


def test_list_partitioning():
    config = il.ListPartitionConfig(column="region", values=["eu", "us", "apac"])
    w = config.window("eu", "us")
    assert w.keys() == ["eu", "us"] and str(w) == "eu..us" and len(w) == 2
    assert [p.value for p in w] == ["eu", "us"]
    assert isinstance(config.partition("apac"), il.ListPartition)
    assert config.partition("apac").value == "apac"
    assert config.partition("eu").filter("region").to_sql() == ('"region" IN (?)', ["eu"])
    config.check(config.partition("eu"))
    with pytest.raises(il.PartitionError, match="'mars'"):
        config.window("eu", "mars")
    with pytest.raises(il.PartitionError):
        config.window("us", "eu")
    with pytest.raises(il.PartitionError, match="2 partitions|allow_window"):
        config.check(w)
    il.ListPartitionConfig("region", ["eu", "us"], allow_window=True).check(
        il.ListPartitionConfig("region", ["eu", "us"]).window("eu", "us"))
    for bad in ([], ["eu", "eu"], ["eu", ""]):
        with pytest.raises(il.PartitionError):
            il.ListPartitionConfig("region", bad)
    with pytest.raises(ValueError):  # PartitionError is a ValueError
        il.ListPartitionConfig("region", [])


def test_list_values_obey_the_rules_of_keys():
    for bad, rule in (("a..b", "contains '..'"), ("v2.", "begins or ends with '.'"),
                      ("a\nb", "control character 0x0a"), ("a\0b", "control character 0x00")):
        with pytest.raises(il.PartitionError, match=rule):
            il.ListPartitionConfig("region", ["eu", bad])


def test_a_window_text_is_read_by_the_partitioning_it_is_for():
    periods = il.ListPartitionConfig("period", ["2026", "emea", "Q1", "Q2", "Q3"], allow_window=True)
    daily = il.TimePartitionConfig(column="date")
    monthly = il.TimePartitionConfig("date", granularity=G.MONTH, allow_window=True)
    assert periods.read_window("Q1..Q3").keys() == ["Q1", "Q2", "Q3"]
    assert periods.read_window("2026").keys() == ["2026"]
    assert periods.read_window("emea..Q1").keys() == ["emea", "Q1"]
    assert daily.read_window("2026") == il.TimePartitionWindow.parse("2026")
    assert len(daily.select_window("2026")) == 365
    assert str(monthly.select_window("2026-11-03")) == "2026-11"
    with pytest.raises(ValueError):
        daily.read_window("emea")
    with pytest.raises(il.PartitionError, match="'Q4'"):
        periods.read_window("Q4")


def test_every_partitioning_answers_the_common_contract():
    daily = il.TimePartitionConfig(column="date")
    monthly = il.TimePartitionConfig("date", granularity=G.MONTH, allow_window=True,
                                     start=dt.date(2026, 3, 1))
    assert daily.partition("2026-05-20") == il.TimePartition(dt.date(2026, 5, 20))
    assert str(monthly.window("2026-03", "2026-05")) == "2026-03..2026-05"
    assert isinstance(monthly.window("2026-03", "2026-05"), il.TimePartitionWindow)
    monthly.check(monthly.window("2026-03", "2026-05"))
    assert daily.compatible(il.TimePartitionConfig("date"))
    for config in (daily, monthly, il.ListPartitionConfig("region", ["eu", "us"], True)):
        definition = config.to_definition()
        assert isinstance(definition, dict) and definition["kind"] == config.kind
        again = il.PartitionConfig.from_definition(definition)
        assert type(again) is type(config) and again == config
        assert again.to_definition() == definition
        assert il.PartitionConfig.from_definition(repr(config)[len("PartitionConfig.from_definition("):-1]) == config
    assert monthly.to_definition() == {"kind": "time", "column": "date", "granularity": "month",
                                       "allow_window": True, "start": "2026-03-01T00:00:00"} or \
        monthly.to_definition()["start"].startswith("2026-03-01")
    with pytest.raises(il.PartitionError, match="'nope'"):
        il.PartitionConfig.from_definition({"kind": "nope", "column": "x"})


def test_the_validation_errors_of_the_contract():
    daily = il.TimePartitionConfig(column="date")
    week = il.TimePartitionWindow(dt.date(2026, 1, 1), dt.date(2026, 1, 7))
    with pytest.raises(il.PartitionError, match="7 partitions"):
        daily.check(week)  # several partitions without allow_window
    with pytest.raises(il.PartitionError, match="month"):
        daily.check(il.TimePartition(dt.date(2026, 1, 1), G.MONTH))  # another granularity
    with pytest.raises(il.PartitionError):
        daily.check(il.ListPartition("eu"))  # another kind
    started = il.TimePartitionConfig("date", start=dt.date(2026, 1, 5))
    with pytest.raises(il.PartitionError, match="2026-01-05"):
        started.check(il.TimePartition(dt.date(2026, 1, 4)))  # before start
    started.check(il.TimePartition(dt.date(2026, 1, 5)))
    with pytest.raises(ValueError):  # the specification's ValueError
        daily.check(week)


def test_wrong_types_raise_type_error_naming_the_argument():
    daily = il.TimePartitionConfig(column="date")
    with pytest.raises(TypeError, match="check\\(\\): argument 'window'"):
        daily.check("2026-01-01")
    with pytest.raises(TypeError, match="TimePartition\\(\\): argument 'value'"):
        il.TimePartition("2026-01-01")
    with pytest.raises(TypeError, match="argument 'end'"):
        il.TimePartitionWindow(dt.date(2026, 1, 1), None)
    with pytest.raises(TypeError, match="'start'"):
        il.TimePartitionConfig("date", start="2026-01-01")

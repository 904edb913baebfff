"""TimeGranularity from Python, checked against the C++ tests' own tables."""

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest

import interloper as il
from conftest import SOURCE_DIR

G = il.TimeGranularity
ALL = [G.HOUR, G.DAY, G.WEEK, G.MONTH, G.QUARTER, G.YEAR]


def at(text):
    """A C++ test's il::TimePoint::parse(text) as a naive datetime."""
    return dt.datetime.fromisoformat(text)


def cpp_cases(path, pattern):
    text = (SOURCE_DIR / path).read_text()
    return re.findall(pattern, text)


AT = r'at\("([^"]+)"\)'
UNARY = cpp_cases(
    "tests/time/granularity_test.cpp",
    r"EXPECT_EQ\(G::(\w+)\.(truncate|advance)\(" + AT + r"(?:, (-?\d+))?\), " + AT + r"\);",
)
FORMATS = cpp_cases("tests/time/granularity_test.cpp", r'EXPECT_EQ\(G::(\w+)\.format\(' + AT + r'\), "([^"]+)"\);')
BETWEEN = cpp_cases(
    "tests/time/granularity_test.cpp",
    r"EXPECT_EQ\(G::(\w+)\.periods_between\(" + AT + r", " + AT + r"\), (-?\d+)\);",
)
LOOKBACK_TODAY = cpp_cases(
    "tests/partitioning/lookback_test.cpp",
    r'EXPECT_EQ\(today\("([^"]+)", "([^"]+)"(?:, G::(\w+))?\), "([^"]+)"\);',
)


def test_the_tables_were_found():
    assert len(UNARY) >= 15 and len(FORMATS) >= 6 and len(BETWEEN) >= 5 and len(LOOKBACK_TODAY) >= 30


@pytest.mark.parametrize("granularity,method,t,n,expected", UNARY)
def test_truncate_and_advance_match_the_cpp_table(granularity, method, t, n, expected):
    g = getattr(G, granularity)
    got = g.truncate(at(t)) if method == "truncate" else g.advance(at(t), int(n))
    assert got == at(expected)


@pytest.mark.parametrize("granularity,t,key", FORMATS)
def test_format_matches_the_cpp_table_and_parses_back(granularity, t, key):
    g = getattr(G, granularity)
    assert g.format(at(t)) == key
    assert g.format(g.parse(key)) == key


@pytest.mark.parametrize("granularity,a,b,n", BETWEEN)
def test_periods_between_matches_the_cpp_table(granularity, a, b, n):
    assert getattr(G, granularity).periods_between(at(a), at(b)) == int(n)


@pytest.mark.parametrize("now,zone,granularity,key", LOOKBACK_TODAY)
def test_current_partition_in_a_zoneinfo_zone_matches_the_cpp_table(now, zone, granularity, key):
    aware = at(now).replace(tzinfo=dt.timezone.utc).astimezone(ZoneInfo(zone))
    g = getattr(G, granularity) if granularity else G.DAY
    assert str(il.TimePartitionWindow.lookback(aware, 1, 0, g)) == key


def test_dates_in_dates_out_datetimes_for_hours():
    g = G.MONTH
    assert g.truncate(dt.date(2026, 5, 20)) == dt.date(2026, 5, 1)
    assert type(g.truncate(dt.date(2026, 5, 20))) is dt.date
    assert g.advance(dt.date(2026, 5, 1), -1) == dt.date(2026, 4, 1)
    assert g.bounds(dt.date(2026, 5, 20)) == (dt.date(2026, 5, 1), dt.date(2026, 6, 1))
    assert g.format(dt.date(2026, 5, 20)) == "2026-05"
    assert g.parse("2026-05") == dt.date(2026, 5, 1)
    assert g.period_range(dt.date(2026, 1, 31), dt.date(2026, 3, 1)) == [
        dt.date(2026, 1, 1), dt.date(2026, 2, 1), dt.date(2026, 3, 1)]
    assert G.HOUR.advance(dt.date(2026, 5, 20), 1) == dt.datetime(2026, 5, 20, 1)
    assert G.HOUR.parse("2026-05-20T13") == dt.datetime(2026, 5, 20, 13)
    assert G.DAY.truncate(dt.datetime(2026, 5, 20, 13, 5)) == dt.datetime(2026, 5, 20)


def test_aware_datetimes_stand_for_their_utc_label():
    berlin = dt.datetime(2026, 5, 20, 1, 30, tzinfo=ZoneInfo("Europe/Berlin"))  # 23:30 UTC the day before
    assert G.DAY.format(berlin) == "2026-05-19"
    assert G.HOUR.truncate(berlin) == dt.datetime(2026, 5, 19, 23, tzinfo=dt.timezone.utc)
    assert G.HOUR.truncate(berlin).tzinfo is dt.timezone.utc


def test_names_and_values():
    assert [g.name for g in ALL] == ["hour", "day", "week", "month", "quarter", "year"]
    assert all(G.from_name(g.name) == g for g in ALL)
    assert G.infer("2026-W21") == G.WEEK and G.infer("") is None
    assert repr(G.QUARTER) == "TimeGranularity.QUARTER" and str(G.QUARTER) == "quarter"
    assert len({G.DAY, G.DAY, G.MONTH}) == 2
    assert G.DAY != "day"
    import pickle
    assert pickle.loads(pickle.dumps(G.WEEK)) == G.WEEK


def test_bad_keys_raise_value_error_naming_the_key():
    for g, key in [(G.DAY, "2026-02-30"), (G.MONTH, "2026-13"), (G.WEEK, "2025-W53"),
                   (G.QUARTER, "2026-Q5"), (G.DAY, "2026-05"), (G.YEAR, "26")]:
        with pytest.raises(ValueError, match=re.escape(f"'{key}'")):
            g.parse(key)
    with pytest.raises(ValueError, match="'fortnight'"):
        G.from_name("fortnight")


def test_wrong_argument_types_raise_type_error_naming_the_argument():
    with pytest.raises(TypeError, match="truncate\\(\\): argument 't' must be a datetime.date"):
        G.DAY.truncate("2026-05-20")
    with pytest.raises(TypeError, match="periods_between\\(\\): argument 'b'"):
        G.DAY.periods_between(dt.date(2026, 1, 1), 5)
    with pytest.raises(TypeError):
        G.DAY.advance(dt.date(2026, 1, 1), "1")


def test_help_reads_well():
    text = G.__doc__
    assert "ISO-8601" in text and "2026-W21" in text
    assert "start of the period holding t" in G.truncate.__doc__


def test_format_and_advance_are_plain_methods_with_the_same_behaviour():
    g = G.DAY
    assert g.format(g.advance(dt.date(2026, 1, 1), 31)) == "2026-02-01"
    assert G.WEEK.format(G.WEEK.advance(dt.datetime(2026, 5, 20, 13), 1)) == "2026-W22"
    assert type(G.MONTH.advance(dt.datetime(2026, 5, 20, 13), 1)) is dt.datetime
    with pytest.raises(TypeError, match="advance\\(\\) takes two arguments"):
        g.advance(dt.date(2026, 1, 1))
    with pytest.raises(TypeError, match="format\\(\\): argument 't'"):
        g.format(None)
    with pytest.raises(ValueError):
        g.advance(dt.date(2026, 1, 1), 10**12)
    with pytest.raises(OverflowError):
        g.advance(dt.date(2026, 1, 1), 2**70)
    assert "period holding t" in g.format.__doc__ and "n periods after" in g.advance.__doc__

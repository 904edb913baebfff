"""Every Python value round-trips through every destination: SQLite, files (JSON lines and
CSV), and PostgreSQL and S3 where the test services run (scripts/with-postgres,
scripts/with-moto); read back both by a downstream asset (context.load) and by read()."""

import datetime as dt
import decimal
import os
import urllib.request
import uuid

import pytest

import interloper as il

UTC = dt.timezone.utc
ROWS = [
    {"date": dt.date(2026, 1, 2), "i": 2**63 - 1, "f": 1.5e-300, "s": "é \"quoted\", 'x'\n; DROP",
     "b": True, "n": None, "ts": dt.datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
     "amount": decimal.Decimal("12345678901234567890.12"),
     "payload": {"a": "x\"y", "b": [1, 2.5, {"c": None}]}},
    {"date": dt.date(2026, 1, 2), "i": -(2**63), "f": -0.0, "s": "", "b": False, "n": None,
     "ts": dt.datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC), "amount": decimal.Decimal("-0.05"),
     "payload": []},
]


def service(variable):
    value = os.environ.get(variable)
    if not value:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{variable} is not set: the test service did not start")
        pytest.skip(f"{variable} is not set (run under scripts/with-postgres / scripts/with-moto)")
    return value


def s3_url():
    endpoint = service("IL_TEST_S3_ENDPOINT")
    os.environ["AWS_ACCESS_KEY_ID"] = os.environ.get("IL_TEST_S3_ACCESS_KEY_ID", "testing")
    os.environ["AWS_SECRET_ACCESS_KEY"] = os.environ.get("IL_TEST_S3_SECRET_ACCESS_KEY", "testing")
    bucket = "py-" + uuid.uuid4().hex[:12]
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/{bucket}", method="PUT"), timeout=30)
    return f"s3://{bucket}/rows?endpoint={endpoint}&path_style=1"


def postgres_url():
    return service("IL_TEST_POSTGRES_URL")


DESTINATIONS = {
    "sqlite": lambda d: f"sqlite:{d}/data.db",
    "jsonl": lambda d: f"file:{d}/files",
    "csv": lambda d: f"file:{d}/csv?format=csv",
    "postgres": lambda d: postgres_url(),
    "s3": lambda d: s3_url(),
}


@pytest.mark.parametrize("kind", DESTINATIONS)
def test_values_round_trip(workdir, kind):
    url = DESTINATIONS[kind](workdir)
    schema = {"date": dt.date, "i": int, "f": float, "s": str, "b": bool, "n": "string",
              "ts": dt.datetime, "amount": "decimal(38,2)", "payload": "json"}
    suffix = uuid.uuid4().hex[:8]

    @il.asset(name=f"values_{suffix}", partitioning=il.TimePartitionConfig(column="date"), schema=schema)
    def values(context):
        return [dict(r) for r in ROWS]

    loaded = []

    @il.asset(name=f"copy_{suffix}", partitioning=il.TimePartitionConfig(column="date"),
              deps=[f"values_{suffix}"], schema=schema)
    def copy(context):
        loaded.extend(context.load(f"values_{suffix}"))
        return loaded

    dag = il.DAG(il.Source(f"py_{suffix}", [values, copy], destination=url))
    result = dag.materialize(il.TimePartition(dt.date(2026, 1, 2)))
    assert result.ok, result.error_summary()
    key = lambda r: r["i"]
    assert sorted(loaded, key=key) == sorted(ROWS, key=key)
    assert sorted(copy.read(), key=key) == sorted(ROWS, key=key)
    assert [type(v) for v in sorted(copy.read(), key=key)[0].values()] == \
        [type(v) for v in sorted(ROWS, key=key)[0].values()]

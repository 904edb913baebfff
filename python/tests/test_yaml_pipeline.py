"""`python3 -m interloper COMMAND pipeline.yaml`: YAML pipelines whose assets name Python
functions (`python: module:function`), loaded by the C++ loader and run by the engine."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BINARY_DIR

PIPELINE = textwrap.dedent('''\
    destination: sqlite:data.db
    sources:
      - name: shop
        assets:
          - name: orders
            partitioning: {kind: time, column: date, granularity: day}
            command: [./orders.sh, "{partition.key}"]
          - name: enriched
            description: orders with tax
            partitioning: {kind: time, column: date, granularity: day}
            deps: [orders]
            python: TARGET
          - name: daily
            partitioning: {kind: time, column: date, granularity: day}
            deps: [enriched]
            sql: SELECT date, SUM(gross) AS gross, COUNT(*) AS n FROM enriched GROUP BY date
''')

ORDERS = textwrap.dedent('''\
    #!/bin/sh
    echo "{\\"date\\": \\"$1\\", \\"amount\\": 10}"
    echo "{\\"date\\": \\"$1\\", \\"amount\\": 5}"
''')

ASSETS = textwrap.dedent('''\
    import interloper as il

    def enrich(context, orders):
        return [{"date": o["date"], "gross": o["amount"] * 2, "key": context.partition.key}
                for o in orders]

    @il.asset(name="ignored")
    def decorated(context, orders):
        return [{"date": o["date"], "gross": o["amount"] * 3} for o in orders]

    not_callable = 42

    def wants_more(context, orders, customers):
        return []

    def broken(context, orders):
        raise ValueError("no rates for " + context.partition.key)
''')


def interloper(*args, cwd):
    return subprocess.run([sys.executable, "-m", "interloper", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def write_pipeline(workdir, target):
    (workdir / "pipeline.yaml").write_text(PIPELINE.replace("TARGET", target))
    (workdir / "orders.sh").write_text(ORDERS)
    os.chmod(workdir / "orders.sh", 0o755)
    (workdir / "shop_assets.py").write_text(ASSETS)


def daily_rows(workdir):
    import sqlite3
    with sqlite3.connect(workdir / "data.db") as db:
        return db.execute('SELECT date, gross, n FROM "shop__daily" ORDER BY date').fetchall()


@pytest.mark.parametrize("target, factor", [("shop_assets:enrich", 2),
                                            ("shop_assets:decorated", 3),
                                            ("./shop_assets.py:enrich", 2)])
def test_a_python_asset_between_a_command_and_a_query(workdir, target, factor):
    write_pipeline(workdir, target)
    done = interloper("backfill", "pipeline.yaml", "--window", "2026-11-01..2026-11-03",
                      cwd=workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "9 tasks, 9 succeeded" in done.stdout
    assert [(d, g, n) for d, g, n in daily_rows(workdir)] == [
        (f"2026-11-0{day}", 15 * factor, 2) for day in (1, 2, 3)]
    status = interloper("status", "pipeline.yaml", "--asset", "enriched", "--window",
                        "2026-11-01..2026-11-04", cwd=workdir)
    assert status.returncode == 0, status.stderr
    assert "materialized      3  2026-11-01..2026-11-03" in status.stdout
    assert "missing           1  2026-11-04" in status.stdout


def test_a_python_asset_that_raises_fails_its_tasks_and_the_run_goes_on(workdir):
    write_pipeline(workdir, "shop_assets:broken")
    done = interloper("backfill", "pipeline.yaml", "--window", "2026-11-01..2026-11-02",
                      "--concurrency", "2", cwd=workdir)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "6 tasks, 2 succeeded, 2 failed, 2 canceled" in done.stdout
    assert "ValueError: no rates for 2026-11-01 (" in done.stdout
    assert "shop_assets.py, line 17, in broken)" in done.stdout


def test_the_catalog_shows_the_python_target(workdir):
    write_pipeline(workdir, "shop_assets:enrich")
    catalog = interloper("catalog", "pipeline.yaml", "--json", cwd=workdir)
    assert catalog.returncode == 0, catalog.stderr
    enriched = [e for e in json.loads(catalog.stdout) if e["name"] == "enriched"][0]
    assert enriched["body"] == "python" and enriched["python"] == "shop_assets:enrich"
    assert enriched["description"] == "orders with tax" and enriched["deps"] == ["orders"]


@pytest.mark.parametrize("target, why", [
    ("no_such_module:enrich", "ModuleNotFoundError: No module named 'no_such_module'"),
    ("shop_assets:no_such_function", "AttributeError: shop_assets has no attribute "
                                     "'no_such_function'"),
    ("shop_assets:not_callable", "TypeError: not_callable is not callable: 42"),
    ("./missing.py:enrich", "FileNotFoundError: no such file: "),
    ("shop_assets:wants_more", "TypeError: parameter 'customers' of wants_more names no "
                               "dependency of the asset (deps: orders)"),
    ("shop_assets.enrich", "python must be 'module:function' or 'path/to/file.py:function'"),
])
def test_a_python_target_that_cannot_be_used_is_a_load_error(workdir, target, why):
    write_pipeline(workdir, target)
    for command in ("check", "backfill"):
        args = [command, "pipeline.yaml"] + (["--window", "2026-11-01"] if command != "check"
                                             else [])
        done = interloper(*args, cwd=workdir)
        assert done.returncode == 2, done.stdout + done.stderr
        line = done.stderr.strip()
        assert line.startswith("interloper: error: pipeline.yaml:12:17: asset 'enriched'"), line
        assert target in line and why in line, line
    assert not (workdir / "data.db").exists()


def test_the_plain_binary_refuses_a_python_asset(workdir):
    write_pipeline(workdir, "shop_assets:enrich")
    done = subprocess.run([str(BINARY_DIR / "interloper"), "check", "pipeline.yaml"],
                          cwd=workdir, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "interloper: error: pipeline.yaml:12:17: asset 'enriched' is a Python asset "
        "(python: shop_assets:enrich): run this pipeline with python3 -m interloper")

"""A small shop in Python: daily orders, daily revenue read from them, a monthly report.

    python3 -m interloper backfill shop.py --window 2026-11-01..2026-11-30
    python3 -m interloper status shop.py --window 2026-11-01..2026-11-30

Rows go to SQLite in .interloper/data.db; what ran is recorded in .interloper/state.db.
"""

import random

import interloper as il

daily = il.TimePartitionConfig(column="date")
monthly = il.TimePartitionConfig(column="month", granularity=il.TimeGranularity.MONTH)


@il.asset(partitioning=daily)
def orders(context):
    """Between 50 and 200 orders a day, fixed by the date."""
    day = context.partition_date
    rng = random.Random(day.toordinal())
    for n in range(rng.randint(50, 200)):
        yield {"date": day, "order_id": f"{day:%Y%m%d}-{n}", "region": rng.choice(["eu", "us"]),
               "amount": round(rng.uniform(5, 120), 2)}


@il.asset(partitioning=daily)
def revenue(context, orders):
    """Orders and revenue per day and region, from that day's orders."""
    totals = {}
    for order in orders:
        count, amount = totals.get(order["region"], (0, 0.0))
        totals[order["region"]] = (count + 1, amount + order["amount"])
    return [{"date": context.partition_date, "region": region, "orders": count,
             "revenue": round(amount, 2)} for region, (count, amount) in sorted(totals.items())]


@il.asset(partitioning=monthly, deps=["revenue"])
def report(context):
    """The month's revenue, from every day of it."""
    days = context.load("revenue")
    context.logger.info(f"{len(days)} daily rows")
    return [{"month": context.partition.value, "revenue": round(sum(d["revenue"] for d in days), 2),
             "days": len({d["date"] for d in days})}]

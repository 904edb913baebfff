#!/usr/bin/python3
"""Random cron expressions, zones and instants around DST changes, with the fires an independent
brute-force evaluator finds for them.

    cron_oracle.py CASES SEED ZONE...

Fields are expanded by croniter (Debian's python3-croniter); the fires are found by walking the
wall-clock days of the zone with zoneinfo and applying the rules directly: each matching wall
time fires once, a repeated one at its first occurrence, a skipped one at the first instant after
the gap. For UTC cases croniter's own get_next must agree. Output, tab-separated:

  F EXPR ZONE AFTER FIRE1 FIRE2 FIRE3   (UTC seconds since 1970-01-01T00:00:00)
  N EXPR                                (an expression that never fires: must be rejected)
  X MESSAGE                             (the two Python evaluators disagree)
"""
import random
import sys
from datetime import datetime, timedelta, timezone

from croniter import croniter
from zoneinfo import ZoneInfo

MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
LONGEST = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
UTC = timezone.utc


def random_item(rng, lo, hi, names):
    def value(v):
        if names and rng.random() < 0.3 and v - lo < len(names):
            text = names[v - lo]
            return text.upper() if rng.random() < 0.2 else text
        return str(v)

    r = rng.random()
    if r < 0.25:
        return "*"
    if r < 0.4:
        return "*/%d" % rng.randint(1, max(1, (hi - lo) // 2 + 1))
    a = rng.randint(lo, hi)
    if r < 0.7:
        return value(a)
    b = rng.randint(a, hi)
    if r < 0.85:
        return "%s-%s" % (value(a), value(b))
    if r < 0.93:
        return "%s-%s/%d" % (value(a), value(b), rng.randint(1, 10))
    return "%d/%d" % (a, rng.randint(1, 15))


def random_field(rng, lo, hi, names=None, star_bias=0.0):
    if rng.random() < star_bias:
        return "*"
    items = [random_item(rng, lo, hi, names) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    return ",".join(items)


def random_expression(rng):
    macros = ["@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"]
    if rng.random() < 0.03:
        return rng.choice(macros)
    if rng.random() < 0.02:  # a day that no month in the list has
        day, months = rng.choice([("30", "feb"), ("31", "2"), ("30,31", "FEB"), ("31", "apr,jun"),
                                  ("31", "4,6,9,11"), ("31", "sep-sep")])
        return "%d %d %s %s *" % (rng.randint(0, 59), rng.randint(0, 23), day, months)
    typical = rng.random() < 0.3
    minute = random_field(rng, 0, 59) if not typical else str(rng.choice([0, 15, 30, 45]))
    hour = random_field(rng, 0, 23, star_bias=0.2)
    dom = random_field(rng, 1, 31, star_bias=0.6)
    month = random_field(rng, 1, 12, MONTHS, star_bias=0.6)
    dow = random_field(rng, 0, 7, DAYS, star_bias=0.6)
    return " ".join([minute, hour, dom, month, dow])


MACROS = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
          "@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *",
          "@annually": "0 0 1 1 *"}


def weekdays(field):
    """The days of week of a field, as current croniter reads them: 7 is Sunday before ranges
    and steps apply, `N/S` runs from N to Saturday, and `6/S` (Saturday to Saturday) over the
    whole week. Debian's croniter 1.3.5 still reads `N/S` up to 7; other items agree."""
    days = set()
    for item in field.split(","):
        if "/" in item and "-" not in item and not item.startswith("*"):
            start, step = item.split("/")
            v = DAYS.index(start.lower()) if start.lower() in DAYS else int(start) % 7
            days |= set(range(0 if v == 6 else v, 7, int(step)))
        else:
            values = croniter("0 0 * * " + item, datetime(2000, 1, 1)).expanded[4]
            days |= set(range(7)) if "*" in values else set(int(v) % 7 for v in values)
    return days


class Sets:
    def __init__(self, expr):
        expanded = croniter(expr, datetime(2000, 1, 1)).expanded
        fields = MACROS.get(expr, expr).split()

        def full(i, values):
            return set(values) if "*" in expanded[i] else set(int(v) % (7 if i == 4 else 100)
                                                               for v in expanded[i])

        self.minutes = sorted(full(0, range(60)))
        self.hours = sorted(full(1, range(24)))
        self.doms = full(2, range(1, 32))
        self.months = full(3, range(1, 13))
        self.dows = weekdays(fields[4])
        self.croniter_dows = full(4, range(7))  # Debian's croniter, for the UTC cross-check
        # An hour field of `*`, a step or every hour runs on the clock: every occurrence.
        self.on_the_clock = fields[1].startswith("*") or "/" in fields[1] or len(self.hours) == 24
        dom_restricted = len(self.doms) < 31
        dow_restricted = len(self.dows) < 7
        self.day_or = dom_restricted and dow_restricted
        self.never = dom_restricted and not dow_restricted and not any(
            d <= LONGEST[m - 1] for m in self.months for d in self.doms)

    def day(self, date):
        if date.month not in self.months:
            return False
        dom = date.day in self.doms
        dow = (date.weekday() + 1) % 7 in self.dows
        return (dom or dow) if self.day_or else (dom and dow)


def local_of(zone, t):
    return datetime.fromtimestamp(t, zone).replace(tzinfo=None)


def first_instant(zone, wall):
    """The instant at which wall time `wall` fires: its first occurrence, or the end of its gap."""
    u0 = int(wall.replace(tzinfo=zone, fold=0).timestamp())
    u1 = int(wall.replace(tzinfo=zone, fold=1).timestamp())
    for u in sorted({u0, u1}):
        if local_of(zone, u) == wall:
            return u
    lo, hi = min(u0, u1), max(u0, u1)  # a gap: local(lo) < wall < local(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if local_of(zone, mid) > wall:
            hi = mid
        else:
            lo = mid
    return hi


def occurrences(zone, wall):
    """Every instant at which the clocks of `zone` show `wall` (none in a gap, two in a repeat)."""
    found = set()
    for fold in (0, 1):
        u = int(wall.replace(tzinfo=zone, fold=fold).timestamp())
        if local_of(zone, u) == wall:
            found.add(u)
    return found


def steady_offset(zone, date):
    """The zone's UTC offset in seconds on `date` when it holds all day, else None."""
    probes = [datetime(date.year, date.month, date.day, h, mi, tzinfo=zone, fold=f)
              for h, mi in ((0, 0), (6, 0), (12, 0), (18, 0), (23, 59)) for f in (0, 1)]
    offsets = {p.utcoffset() for p in probes}
    return int(offsets.pop().total_seconds()) if len(offsets) == 1 else None


def brute_next_on_the_clock(sets, zone, after):
    """The earliest instant after `after` whose wall time matches; days are walked from the day
    before `after`'s, and one day past the first that yields an instant, since clocks going back
    bring earlier wall times round again."""
    date = local_of(zone, after).date() - timedelta(days=1)
    best, extra = None, None
    for _ in range(366 * 12):
        if sets.day(date):
            offset = steady_offset(zone, date)
            for h in sets.hours:
                for m in sets.minutes:
                    wall = datetime(date.year, date.month, date.day, h, m)
                    if offset is not None:  # no change of offset that day: one instant
                        found = [int((wall - datetime(1970, 1, 1)).total_seconds()) - offset]
                    else:
                        found = occurrences(zone, wall)
                    for u in found:
                        if u > after and (best is None or u < best):
                            best = u
        if best is not None:
            extra = 1 if extra is None else extra - 1
            if extra < 0:
                return best
        date += timedelta(days=1)
    raise RuntimeError("no fire")


def brute_next(sets, zone, after):
    if sets.on_the_clock:
        return brute_next_on_the_clock(sets, zone, after)
    start = local_of(zone, after)
    date = start.date()
    for _ in range(366 * 12):
        if sets.day(date):
            for h in sets.hours:
                for m in sets.minutes:
                    wall = datetime(date.year, date.month, date.day, h, m)
                    if wall <= start:
                        continue
                    u = first_instant(zone, wall)
                    if u > after:
                        return u
        date += timedelta(days=1)
    raise RuntimeError("no fire")


def transitions(zone, year):
    found = []
    t = int(datetime(year, 1, 1, tzinfo=UTC).timestamp())
    end = int(datetime(year + 1, 1, 1, tzinfo=UTC).timestamp())
    off = datetime.fromtimestamp(t, zone).utcoffset()
    while t < end:
        n = t + 86400
        o = datetime.fromtimestamp(n, zone).utcoffset()
        if o != off:
            lo, hi = t, n
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if datetime.fromtimestamp(mid, zone).utcoffset() == off:
                    lo = mid
                else:
                    hi = mid
            found.append(hi)
        t, off = n, o
    return found


def main():
    cases, seed, zones = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    rng = random.Random(seed)
    out = sys.stdout
    changes = {}
    for i in range(cases):
        expr = random_expression(rng)
        sets = Sets(expr)
        if sets.never:
            out.write("N\t%s\n" % expr)
            continue
        name = zones[i % len(zones)]
        zone = ZoneInfo(name)
        year = rng.randint(1975, 2099)
        if (name, year) not in changes:
            changes[(name, year)] = transitions(zone, year)
        near = changes[(name, year)]
        if near and name != "UTC":
            after = rng.choice(near) + rng.choice([
                rng.randint(-3 * 86400, 3 * 86400), rng.randint(-7200, 7200), rng.randint(-61, 61)])
        else:
            after = int(datetime(year, 1, 1, tzinfo=UTC).timestamp()) + rng.randint(0, 365 * 86400)
        fires = []
        t = after
        for _ in range(3):
            t = brute_next(sets, zone, t)
            fires.append(t)
        if name == "UTC" and sets.dows == sets.croniter_dows:
            it = croniter(expr, datetime.fromtimestamp(after, UTC).replace(tzinfo=None))
            theirs = [int(it.get_next(datetime).replace(tzinfo=UTC).timestamp()) for _ in range(3)]
            if theirs != fires:
                out.write("X\t%s after %d: croniter %s, brute force %s\n" % (expr, after, theirs, fires))
        out.write("F\t%s\t%s\t%d\t%d\t%d\t%d\n" % (expr, name, after, *fires))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Prints how Python's zoneinfo converts instants and civil times around every offset change of
the zones named on the command line, from 1900 to 2100, plus random ones in between.

One line per probe:
  U ZONE UTC_SECONDS LOCAL_SECONDS                 (a UTC instant and its civil time)
  L ZONE CIVIL_SECONDS KIND FIRST_UTC SECOND_UTC   (a civil time and the instants it names;
                                                    KIND is unique, skipped or repeated)
All seconds count from 1970-01-01T00:00:00. For a skipped civil time both instants are the first
instant after the gap; for a repeated one, the earlier instant comes first.
"""
import random
import sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

BEGIN = int(datetime(1900, 1, 1, tzinfo=timezone.utc).timestamp())
END = int(datetime(2100, 12, 31, tzinfo=timezone.utc).timestamp())
EPOCH = datetime(1970, 1, 1)


def offset(zone, t):
    return int(datetime.fromtimestamp(t, zone).utcoffset().total_seconds())


def transitions(name, zone):
    """Every instant T in [BEGIN, END] whose offset differs from T - 1's."""
    found = []
    try:  # the stored transitions, read through the pure-Python reader of the same file
        from zoneinfo import _zoneinfo

        stored = [t for t in _zoneinfo.ZoneInfo.no_cache(name)._trans_utc if BEGIN < t <= END]
        found.extend(t for t in stored if offset(zone, t - 1) != offset(zone, t))
        scan_from = max([BEGIN] + stored)
    except (ImportError, AttributeError):
        scan_from = BEGIN
    # Past the stored ones the rule at the end of the file decides: scan day by day, bisect.
    step = 86400
    t = scan_from
    before = offset(zone, t)
    while t < END:
        nxt = min(t + step, END)
        after = offset(zone, nxt)
        if after != before:
            lo, hi = t, nxt  # offset(lo) == before, offset(hi) != before
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if offset(zone, mid) == before:
                    lo = mid
                else:
                    hi = mid
            found.append(hi)
        t, before = nxt, after
    return sorted(set(found))


def civil_seconds(zone, t):
    return t + offset(zone, t)


def resolve(zone, c):
    naive = EPOCH + timedelta(seconds=c)
    u0 = int(naive.replace(tzinfo=zone, fold=0).timestamp())
    u1 = int(naive.replace(tzinfo=zone, fold=1).timestamp())
    valid0 = civil_seconds(zone, u0) == c
    valid1 = civil_seconds(zone, u1) == c
    if u0 == u1 and valid0:
        return "unique", u0, u0
    if valid0 and valid1:
        return "repeated", min(u0, u1), max(u0, u1)
    if valid0 != valid1:
        u = u0 if valid0 else u1
        return "unique", u, u
    # A gap: the first instant whose civil time is past c.
    lo, hi = min(u0, u1), max(u0, u1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if civil_seconds(zone, mid) > c:
            hi = mid
        else:
            lo = mid
    return "skipped", hi, hi


def main():
    rng = random.Random(20260329)
    out = sys.stdout
    for name in sys.argv[1:]:
        zone = ZoneInfo(name)
        instants = set()
        civils = set()
        for t in transitions(name, zone):
            for d in (-86400, -7200, -3601, -1800, -1, 0, 1, 1800, 3599, 7200, 86400):
                instants.add(t + d)
            for c in (t + offset(zone, t - 1), t + offset(zone, t)):
                for d in (-7200, -3601, -3600, -1801, -1800, -1, 0, 1, 900, 1799, 1800, 3599, 3600):
                    civils.add(c + d)
        for _ in range(300):
            instants.add(rng.randrange(BEGIN, END))
            civils.add(rng.randrange(BEGIN, END))
        for t in sorted(instants):
            out.write(f"U {name} {t} {civil_seconds(zone, t)}\n")
        for c in sorted(civils):
            kind, first, second = resolve(zone, c)
            out.write(f"L {name} {c} {kind} {first} {second}\n")


if __name__ == "__main__":
    main()

#!/bin/sh
# Prints one hour of synthetic page views as JSON lines: hour, page, views.
# Deterministic: the counts depend only on the hour's start (IL_BOUNDS_START, set by interloper)
# and follow a day curve, quiet at night and busy in the evening.
#   IL_BOUNDS_START=2026-11-03T20:00:00 ./pageviews.sh
set -eu
start="${IL_BOUNDS_START:?pageviews.sh runs as an hourly asset (IL_BOUNDS_START is unset)}"
awk -v start="$start" 'BEGIN {
  split("home pricing docs blog", pages, " ")
  hour = substr(start, 12, 2) + 0
  seed = substr(start, 1, 4) substr(start, 6, 2) substr(start, 9, 2) substr(start, 12, 2)
  state = (seed % 2147483646) + 1
  base = 20 + 10 * (hour >= 7) + 25 * (hour >= 17 && hour <= 22)
  for (i = 1; i <= 4; i++) {
    views = base * (5 - i) + next_random() % 40
    printf "{\"hour\":\"%s\",\"page\":\"%s\",\"views\":%d}\n", start, pages[i], views
  }
}
function next_random() {
  state = (state * 16807) % 2147483647
  return state
}'

#!/bin/sh
# Prints one day of synthetic shop orders as JSON lines: date, region, user_id, amount.
# Deterministic: the rows depend only on the date (a Park-Miller generator seeded from it),
# so every run, on every machine, prints the same rows for the same day.
#   ./events.sh 2026-11-03
set -eu
day="${1:?usage: events.sh YYYY-MM-DD}"
case "$day" in
  [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]) ;;
  *) echo "events.sh: '$day' is not a date (YYYY-MM-DD)" >&2; exit 2 ;;
esac
echo "generating orders for $day" >&2
awk -v day="$day" 'BEGIN {
  split("eu us apac latam", regions, " ")
  seed = day; gsub("-", "", seed)
  state = (seed % 2147483646) + 1
  rows = 50 + next_random() % 151
  for (i = 0; i < rows; i++) {
    region = regions[1 + next_random() % 4]
    user = 1000 + next_random() % 9000
    cents = 100 + next_random() % 19900
    printf "{\"date\":\"%s\",\"region\":\"%s\",\"user_id\":%d,\"amount\":%d.%02d}\n", \
           day, region, user, int(cents / 100), cents % 100
  }
}
# Park-Miller "minimal standard" generator: exact in double precision, so mawk, gawk and
# busybox awk agree.
function next_random() {
  state = (state * 16807) % 2147483647
  return state
}'

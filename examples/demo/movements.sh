#!/bin/sh
# Prints one day of synthetic account movements as JSON lines: date, account, amount.
# Deterministic: the amounts depend only on the day (IL_PARTITION_KEY, set by interloper).
#   IL_PARTITION_KEY=2026-11-03 ./movements.sh
set -eu
day="${IL_PARTITION_KEY:?movements.sh runs as a daily asset (IL_PARTITION_KEY is unset)}"
awk -v day="$day" 'BEGIN {
  split("alice bob carol", accounts, " ")
  state = (substr(day, 1, 4) substr(day, 6, 2) substr(day, 9, 2)) % 2147483646 + 1
  for (i = 1; i <= 3; i++) {
    state = (state * 16807) % 2147483647
    printf "{\"date\":\"%s\",\"account\":\"%s\",\"amount\":%d}\n", day, accounts[i], state % 200 - 80
  }
}'

#!/bin/sh
# Prints a monthly revenue target for each region of the run's window, as JSON lines.
# interloper passes the window's regions in IL_PARTITION_VALUES, one per line.
set -eu
printf '%s\n' "${IL_PARTITION_VALUES:?run me through interloper (IL_PARTITION_VALUES is unset)}" |
awk 'NF {
  # A deterministic target from the region name: 1000 per letter plus a letter-based bonus.
  target = 0
  for (i = 1; i <= length($0); i++) target += 1000 + 37 * index("abcdefghijklmnopqrstuvwxyz", substr($0, i, 1))
  printf "{\"region\":\"%s\",\"target\":%d}\n", $0, target
}'

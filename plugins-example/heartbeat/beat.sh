#!/bin/sh
# Shows: a supervised service. Each output line reaches the supervisor's stderr as
# "[heartbeat/beat] ...".
while :; do
  echo "alive at $(date -u +%H:%M:%S)"
  sleep "${BEAT_SECONDS:-5}"
done

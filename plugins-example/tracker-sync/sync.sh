#!/bin/sh
# Shows: a user-invoked action. Its output is shown to the user and its exit code is passed on.
if [ -z "$TASK_ID" ]; then
  echo "no task given: nothing to sync" >&2
  exit 2
fi
echo "synced task #$TASK_ID ($TASK_TITLE) to the tracker"

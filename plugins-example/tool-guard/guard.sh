#!/bin/sh
# A pre_tool_call guard: one JSON request per line on stdin, one answer per line on stdout, so it
# serves a one-shot call (one line, then end of input) and the daemon's persistent mode alike.
# The rules are in guard.awk (POSIX awk: nothing to install). The loop reads each line itself
# because some awks (mawk) wait for a full input buffer before they answer the first line.
rules="$(dirname "$0")/guard.awk"
while IFS= read -r request || [ -n "$request" ]; do
  printf '%s\n' "$request" | awk -f "$rules"
done

#!/bin/sh
# A pre_tool_call guard: one JSON request per line on stdin, one answer per line on stdout echoing
# the request's "id", so it serves a one-shot call (one line, then end of input) and the daemon's
# persistent mode alike.
# The rules are in guard.awk (POSIX awk: nothing to install); one awk answers every line, flushing
# each answer. mawk reads a pipe in whole buffers unless told to read line by line; other awks
# (gawk, BusyBox, BSD) answer each line as it arrives.
rules="$(dirname "$0")/guard.awk"
if awk -W version </dev/null 2>/dev/null | grep -q mawk; then
  awk -W interactive -f "$rules"
else
  awk -f "$rules"
fi

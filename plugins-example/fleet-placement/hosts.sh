#!/bin/sh
# task.hosts ("where could this task go?"): every host of ./hosts, the same file place.sh picks
# from, as {"hosts":[{"name","target","workdir","detail"}]}. The request on stdin is not needed.
exec awk '
  function q(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
  /^[ \t]*(#|$)/ { next }
  {
    sub(/[ \t]+--([ \t].*)?$/, "")
    $0 = $0
    out = out (out == "" ? "" : ",") "{\"name\":" q($1) ",\"target\":" q($1) ",\"workdir\":" q($2) \
      ",\"detail\":" q("hosts file line " NR) "}"
  }
  END { print "{\"hosts\":[" out "]}" }
' "${TASK_PLUGIN_DIR:-.}/hosts"

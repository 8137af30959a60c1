#!/bin/sh
# Shows: a pre_tool_call guard. The request JSON arrives on stdin; answering
# {"action":"block","reason":...} blocks the call, empty stdout with exit 0 allows it.
request=$(cat)
case "$request" in
  *'rm -rf /'*|*'rm -fr /'*|*'git push --force'*|*'git push -f'*|*'mkfs'*|*'dd if=/dev/zero of=/dev/'*)
    printf '{"action":"block","reason":"destructive shell command"}\n' ;;
esac

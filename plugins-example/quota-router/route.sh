#!/bin/sh
# Shows: a task.route handler. It answers with KEY=VALUE lines on stdout; stderr is only logged.
# Over quota when the file named by QUOTA_FILE (default ./quota) contains "exhausted".
quota="${QUOTA_FILE:-$TASK_PLUGIN_DIR/quota}"
if [ -f "$quota" ] && grep -q exhausted "$quota"; then
  echo "HOLD=true"
  echo "REASON=quota exhausted until $(cat "$quota.reset" 2>/dev/null || echo later)"
  exit 0
fi
case "$TASK_PROJECT" in
  work-*) echo "CLAUDE_CONFIG_DIR=\"$HOME/.claude-work\"" ; echo "REASON=work project" ;;
  *) echo "# personal projects keep the default profile" ;;
esac

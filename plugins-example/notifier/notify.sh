#!/bin/sh
# Shows: an event hook. ty passes the task in TASK_* variables; stdout is only logged.
log="${NOTIFIER_LOG:-$TASK_PLUGIN_DIR/notifications.log}"
printf '%s #%s %s: %s\n' "$TASK_EVENT" "$TASK_ID" "$TASK_TITLE" "$TASK_MESSAGE" >> "$log"
echo "notified: $TASK_EVENT #$TASK_ID"

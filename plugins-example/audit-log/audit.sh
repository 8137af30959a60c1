#!/bin/sh
# Shows: a post_tool_call hook. The request (tool, args, result, error) arrives on stdin as one
# JSON object; the hook's answer is ignored (fire-and-forget).
log="${AUDIT_LOG:-$TASK_PLUGIN_DIR/audit.jsonl}"
{ cat; echo; } >> "$log"

#!/bin/sh
exec tyhooks pick-host --hosts "$TASK_PLUGIN_DIR/hosts"

"""Claude Code's hooks, run as Claude Code runs them: matcher, runner, the JSON protocol.

The agent loop hands each call's entry to `RunHooks` (run.py) through `entry.run`: before
the call (PreToolUse), after it (PostToolUse, PostToolUseFailure), after a turn's calls
(PostToolBatch) and at the run's end (SubagentStop). The admission gate decides whether
a tool is offered; hooks decide about this call. `matcher` is a leaf: config reads it.
"""

"""`subagent check` and `subagent lock`: expectations, tool-surface locks, JUnit."""

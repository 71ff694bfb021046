"""The SQLite session store: `SUBAGENT_HOME/logs.db`, written as sessions run, read by `log`."""

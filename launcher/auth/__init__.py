"""OAuth state kept between sessions: one token file per server under `SUBAGENT_HOME/auth/`."""

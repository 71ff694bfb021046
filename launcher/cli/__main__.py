"""`python -m launcher.cli`: the same entry point as the `subagent` script."""

from launcher.cli.entry import main

main()

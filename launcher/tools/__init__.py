"""Built-in tools (read, write, edit, bash, grep, find, ls) and the memory tools."""

from launcher.tools.memory import memory_entries
from launcher.tools.registry_entries import builtin_entries
from launcher.tools.workspace import Workspace

__all__ = ["Workspace", "builtin_entries", "memory_entries"]

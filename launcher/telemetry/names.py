"""Span and attribute names: the OpenTelemetry GenAI and MCP conventions, and our own.

GenAI: semantic-conventions-genai, docs/gen-ai (agent spans, inference and execute_tool
spans, the registry of `gen_ai.*`); MCP: docs/gen-ai/mcp.md (`mcp.*`). Names of our own
start with `subagent.`. All of it is the outside contract (CONTRACT.md, docs/traces.md).
"""

from __future__ import annotations

INSTRUMENTATION = "subagent"
"""The tracer's name (instrumentation scope); the MCP SDK's own spans come as `mcp-python-sdk`."""

# gen_ai.*
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"
AGENT_DESCRIPTION = "gen_ai.agent.description"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
ERROR_TYPE = "error.type"

# mcp.* and the transport
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
NETWORK_TRANSPORT = "network.transport"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

# operation names
INVOKE_AGENT = "invoke_agent"
CHAT = "chat"
EXECUTE_TOOL = "execute_tool"

# subagent.*
SERVER = "subagent.server"
TOOL = "subagent.tool"
VETOED = "subagent.vetoed"
VETO_REASON = "subagent.veto_reason"
STATUS = "subagent.status"
TURNS = "subagent.turns"
TOOL_CALLS = "subagent.tool_calls"
TOOLS = "subagent.tools"
SERVER_NAME = "subagent.server.name"
SERVER_VERSION = "subagent.server.version"
BATCH_FILE = "subagent.batch.file"
BATCH_COMPLETED = "subagent.batch.completed"
BATCH_FAILED = "subagent.batch.failed"
BATCH_SKIPPED = "subagent.batch.skipped"
ATTEMPT = "subagent.attempt"
DELAY_S = "subagent.delay_s"
REASON = "subagent.reason"
ADDED = "subagent.tools.added"
REMOVED = "subagent.tools.removed"
CHANGED = "subagent.tools.changed"

# events
LIST_CHANGED = "tools/list_changed"
"""On the session's span: a server's re-listed tools changed the tool set."""
SERVER_FAILED = "subagent.server.failed"
"""On the session's span: a connected server failed."""
RETRY = "subagent.retry"
"""On a chat span: the request failed and is sent again after a delay."""

# the opt-in switch
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""`true`: prompts, messages, tool arguments and results go into spans (masked)."""

// Drives `subagent serve` with the official TypeScript MCP client and the official
// Tasks requester (@modelcontextprotocol/client + @modelcontextprotocol/ext-tasks).
//
// Run by tests/e2e/test_serve_tasks_node.py with the Node 22 from .interop:
//   node tasks_client.mjs  (TASKS_E2E = JSON {interop, era, command, args, env, cwd,
//                           quick, long, pidfile}; or {url, token} instead of
//                           command...cwd: serve --http, over streamable HTTP)
// era "legacy": the client's default handshake (2025-11-25 Tasks); era "modern": the
// client negotiates 2026-07-28 and the requester speaks the tasks extension through a
// raw request path (the SDK client's own codecs reject `resultType: "task"`).
// Prints JSON lines on stdout: {"phase": "cancelled", ...} once the cancelled run has
// settled, then waits for a line on stdin (the caller checks the processes while serve
// still runs), then {"phase": "done", ...} with what each step saw. Every wait is bounded.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const spec = JSON.parse(process.env.TASKS_E2E);
const STEP_MS = 60_000; // bounds each awaited step; a sub-agent run takes seconds

// The packages live in .interop/node_modules, outside this file's resolution path:
// import each by its package's own ESM entry, the same file ext-tasks itself loads.
async function load(pkg, subpath) {
  const root = join(spec.interop, "node_modules", pkg);
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const entry = manifest.exports[subpath].import;
  const file = typeof entry === "string" ? entry : entry.default;
  return import(pathToFileURL(join(root, file)).href);
}

const { Client } = await load("@modelcontextprotocol/client", ".");
const { StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client", ".");
const { StdioClientTransport } = await load("@modelcontextprotocol/client", "./stdio");
const tasks = await load("@modelcontextprotocol/ext-tasks", "./client");

function bounded(promise, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), STEP_MS);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

async function until(predicate, what) {
  const deadline = Date.now() + STEP_MS;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function readPid(path) {
  const text = existsSync(path) ? readFileSync(path, "utf8").trim() : "";
  return /^[0-9]+$/.test(text) ? Number(text) : null;
}

// The host's raw request path for the extension's wire shapes: requests go out on the
// client's transport under string ids (the client numbers its own), and their responses
// are taken off the transport before the client sees them.
function rawPath(transport) {
  const pending = new Map();
  let next = 0;
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const waiter = typeof message?.id === "string" ? pending.get(message.id) : undefined;
    if (waiter === undefined) return deliver?.(message, extra);
    pending.delete(message.id);
    waiter(message);
  };
  return async (request) => {
    const id = `raw-${++next}`;
    const answer = new Promise((resolve) => pending.set(id, resolve));
    await transport.send({ jsonrpc: "2.0", id, ...request });
    const message = await bounded(answer, `raw ${request.method}`);
    return "error" in message
      ? { kind: "error", error: message.error }
      : { kind: "result", result: message.result };
  };
}

function textOf(result) {
  return (result?.content ?? []).map((block) => block.text ?? "").join("");
}

const out = {};
const clientInfo = { name: "subagent-tasks-e2e", version: "0.0.0" };
const modern = spec.era === "modern";
const client = new Client(
  clientInfo,
  modern ? { versionNegotiation: { mode: "auto" } } : undefined,
);
const transport = spec.url
  ? new StreamableHTTPClientTransport(new URL(spec.url), {
      requestInit: { headers: { Authorization: `Bearer ${spec.token}` } },
    })
  : new StdioClientTransport({
      command: spec.command,
      args: spec.args,
      env: spec.env,
      cwd: spec.cwd,
      stderr: "ignore",
    });
await bounded(client.connect(transport), "connect");
out.era = client.getProtocolEra();
out.tools = (await bounded(client.listTools(), "list")).tools.map((tool) => tool.name);
// A foreground spawn: the call's result is the sub-agent's answer.
const foreground = await bounded(
  client.callTool({
    name: "spawn_subagent",
    arguments: { prompt: "go", ext: ["lazy"], model: spec.quick },
  }),
  "foreground spawn",
);
out.foreground = { text: textOf(foreground), isError: foreground.isError ?? false };
out.serverTasks = client.getServerCapabilities()?.tasks ?? null;

out.serverExtensions = client.getServerCapabilities()?.extensions ?? null;
const endpointId = await tasks.createTaskSessionEndpointId("subagent-e2e", { cwd: spec.cwd });
const session = tasks.createTaskSessionFromClient(
  client,
  modern
    ? {
        endpointId,
        rawDispatch: rawPath(transport),
        v2RequestFraming: {
          protocolVersion: "2026-07-28",
          clientInfo,
          clientCapabilities: {},
        },
      }
    : { endpointId },
);
try {
  out.capabilities = session.capabilities;

  // A spawn preferred as a task comes back as a task handle and settles with the answer.
  const first = await bounded(
    session.callTool(
      "spawn_subagent",
      { prompt: "go", ext: ["lazy"], model: spec.quick },
      { task: { preference: "prefer", retentionMs: 600_000 } },
    ),
    "spawn as task",
  );
  const firstSettled = await bounded(first.settle(), "settle");
  out.first = {
    kind: first.kind,
    taskId: first.handle?.taskId ?? null,
    outcome: firstSettled.outcome.status,
    text: textOf(tasks.resultFromTaskOutcome(firstSettled.outcome)),
    lastTask: firstSettled.lastTask?.raw ?? null,
  };

  // A cancel ends the worker and its servers: the pytest side checks the pid.
  rmSync(spec.pidfile, { force: true }); // the first run's server wrote it too
  const second = await bounded(
    session.callTool(
      "spawn_subagent",
      { prompt: "go", ext: ["lazy"], model: spec.long },
      { task: { preference: "prefer" } },
    ),
    "spawn long as task",
  );
  await until(() => readPid(spec.pidfile) !== null, "the long run's server to start");
  const serverPid = readPid(spec.pidfile);
  await bounded(second.cancel(), "cancel");
  const secondSettled = await bounded(second.settle(), "settle cancelled");
  out.second = {
    kind: second.kind,
    taskId: second.handle?.taskId ?? null,
    outcome: secondSettled.outcome.status,
    serverPid,
  };
  process.stdout.write(`${JSON.stringify({ phase: "cancelled", ...out.second })}\n`);
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  await bounded(lines.next(), "the caller's go-ahead");

  if (!modern) {
    // tasks/list is the 2025-11-25 era's; the extension has none.
    const page = await bounded(session.listTasks(), "list");
    out.listed = page.tasks.map((task) => ({ taskId: task.taskId, status: task.status }));
  }
} finally {
  await session.close();
  await client.close();
}
process.stdout.write(`${JSON.stringify({ phase: "done", ...out })}\n`);
process.exit(0); // the readline on stdin would keep the event loop alive

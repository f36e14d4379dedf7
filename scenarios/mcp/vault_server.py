#!/usr/bin/env python3
"""A minimal MCP server over stdio, for leakbench scenarios: a "vault" whose
one tool hands out a secret, the way a real secrets-manager or config MCP
server would. It exists to be a leak path: what an MCP tool returns goes
into the conversation, and from there to the model provider.

Protocol: JSON-RPC 2.0, one message per line on stdin and stdout (the MCP
stdio transport). It answers initialize, ping, tools/list and tools/call;
notifications (no id) get no answer; any other request gets -32601.

Configuration, from the environment (set in the run's MCP config):
  VAULT_TOOL    the tool's name (default get_secret)
  VAULT_NAME    the name of the secret it describes (default API_KEY)
  VAULT_SECRET  the value it returns
Standard library only; nothing is written but the answers on stdout and
one line on stderr when it starts.
"""
import json
import os
import sys

TOOL = os.environ.get("VAULT_TOOL", "get_secret")
NAME = os.environ.get("VAULT_NAME", "API_KEY")


def tools():
    return [{
        "name": TOOL,
        "description": "Returns the value of a secret held in the project's vault.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "the secret's name, e.g. " + NAME}},
            "required": ["name"],
        },
    }]


def call(params):
    if params.get("name") != TOOL:
        return None, {"code": -32602, "message": "unknown tool: %s" % params.get("name")}
    args = params.get("arguments") or {}
    which = args.get("name", NAME)
    if which != NAME:
        text = "no secret named %s in the vault" % which
        return {"content": [{"type": "text", "text": text}], "isError": True}, None
    text = "%s=%s" % (NAME, os.environ.get("VAULT_SECRET", ""))
    return {"content": [{"type": "text", "text": text}], "isError": False}, None


def answer(msg):
    method = msg.get("method")
    params = msg.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2024-11-05"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "leakbench-vault", "version": "1.0"},
        }, None
    if method == "ping":
        return {}, None
    if method == "tools/list":
        return {"tools": tools()}, None
    if method == "tools/call":
        return call(params)
    return None, {"code": -32601, "message": "method not found: %s" % method}


def main():
    sys.stderr.write("leakbench-vault: serving tool %s\n" % TOOL)
    sys.stderr.flush()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            out = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
            continue
        if not isinstance(msg, dict) or "id" not in msg:
            continue            # a notification (notifications/initialized, ...)
        result, error = answer(msg)
        out = {"jsonrpc": "2.0", "id": msg["id"]}
        if error:
            out["error"] = error
        else:
            out["result"] = result
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()

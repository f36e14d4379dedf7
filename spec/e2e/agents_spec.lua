-- Issue 15, end to end: a subject's agent layer, plugin, MCP server,
-- claude_args and env, with real podman and Claude Code on the scripted
-- model.
--
--   - the layered subject (spec/fixtures/e2e/subjects/layered.lua): its
--     agent layer brings a plugin and an MCP server; the MCP tool is called
--     and answers from the layer, the plugin's hook refuses the Bash call
--     (its reason is the tool result), the init event's plugins and MCP
--     status are in result.json, claude_args reach the wire;
--   - a plugin dir that is not there, and an MCP server that does not
--     start, each make the run an error naming them;
--   - a second run builds nothing: no "building image" line, and the
--     store's images are the same.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"

local FIX = "spec/fixtures/e2e"

local function results(out)
  local ok, doc = pcall(cjson.decode, sh.read(out .. "/results.json") or "")
  local by = {}
  for _, r in ipairs(ok and type(doc) == "table" and doc.runs or {}) do by[r.subject] = r end
  return by
end

-- The tool results of a run's stream, in order: { text=, is_error= }.
local function tool_results(dir)
  local out = {}
  for line in (sh.read(dir .. "/stream.jsonl") or ""):gmatch("[^\n]+") do
    local ok, e = pcall(cjson.decode, line)
    if ok and type(e) == "table" and e.type == "user" and type(e.message) == "table"
        and type(e.message.content) == "table" then
      for _, b in ipairs(e.message.content) do
        if type(b) == "table" and b.type == "tool_result" then
          local text = b.content
          if type(text) == "table" then
            local parts = {}
            for _, p in ipairs(text) do parts[#parts + 1] = type(p) == "table" and tostring(p.text) or "" end
            text = table.concat(parts)
          end
          out[#out + 1] = { text = tostring(text), is_error = b.is_error == true }
        end
      end
    end
  end
  return out
end

local function images()
  local r = sh.run({ "podman", "images", "--format", "{{.ID}} {{.Repository}}:{{.Tag}}" })
  local lines = {}
  for l in r.stdout:gmatch("[^\n]+") do lines[#lines + 1] = l end
  table.sort(lines)
  return table.concat(lines, "\n")
end

describe("agent layers, plugins and MCP servers", function()
  local build = os.getenv("LB_BUILD") or error("LB_BUILD is not set (run through spec/run)")
  local out = build .. "/e2e-agents"
  sh.rmtree(out)
  sh.rmtree(out .. "-again")
  local run = sh.leakbench({ "run", FIX .. "/layered-scenario.lua", "--no-baseline", "--jobs", "2",
    "--out", out,
    "--subject", FIX .. "/subjects/layered.lua",
    "--subject", FIX .. "/subjects/broken-plugin.lua",
    "--subject", FIX .. "/subjects/broken-mcp.lua" })
  local runs = results(out)
  local said = run.stderr .. run.stdout

  it("runs the layered subject: MCP tool called, plugin hook fired, startup in the evidence", function()
    local r = sh.must(runs.layered, "no layered run; leakbench said:\n" .. said)
    assert.are.equal("pass", r.verdict, tostring(r.reason))
    local tr = tool_results(r.dir)
    assert.are.equal(2, #tr)
    assert.are.equal("note-from-the-agent-layer", tr[1].text, "the MCP tool did not answer from the agent layer")
    assert.is_true(tr[2].is_error)
    assert.truthy(tr[2].text:find("layered-guard: refused a command that names .env", 1, true),
      "the plugin's hook did not refuse the Bash call: " .. tr[2].text:sub(1, 200))
    -- The init event's view, kept in result.json.
    local plugin, server
    for _, p in ipairs(r.startup.plugins) do
      if p.path == "/opt/layered/plugin" then plugin = p end
    end
    for _, s in ipairs(r.startup.mcp_servers) do
      if s.name == "notes" then server = s end
    end
    assert.are.equal("layered-guard", sh.must(plugin, "the plugin is not in startup.plugins").name)
    assert.are.equal("connected", sh.must(server, "the server is not in startup.mcp_servers").status)
    assert.are.equal("2.1.332", r.claude_version)
    -- Nothing leaked: the plugin refused the read.
    for _, s in ipairs(r.leaks) do
      assert.is_false(s.channels.wire.leaked)
    end
    -- claude_args reached Claude Code: its system prompt is on the wire.
    local wire = sh.run({ "grep", "-rl", "layered-claude-args-marker", r.dir .. "/records" })
    assert.are.equal(0, wire.status, "the --append-system-prompt of claude_args is not on the wire")
  end)

  it("makes a plugin that is not there an error naming it", function()
    local r = sh.must(runs["broken-plugin"], "no broken-plugin run; leakbench said:\n" .. said)
    assert.are.equal("error", r.verdict)
    assert.are.equal("plugin", r.error_kind)
    assert.are.equal("plugin '/opt/no-such-plugin' failed to load: Path not found: /opt/no-such-plugin",
      r.reason)
    assert.truthy(run.stdout:find("error (plugin)", 1, true), run.stdout)
  end)

  it("makes an MCP server that does not start an error naming it", function()
    local r = sh.must(runs["broken-mcp"], "no broken-mcp run; leakbench said:\n" .. said)
    assert.are.equal("error", r.verdict)
    assert.are.equal("mcp", r.error_kind)
    assert.are.equal("MCP server 'dead' did not start (status 'failed' in the init event)", r.reason)
    assert.are.equal(3, run.status)
  end)

  it("builds nothing the second time", function()
    local before = images()
    local again = sh.leakbench({ "run", FIX .. "/layered-scenario.lua", "--no-baseline",
      "--out", out .. "-again", "--subject", FIX .. "/subjects/layered.lua" })
    assert.is_nil(again.stderr:find("building image", 1, true), again.stderr)
    assert.are.equal("pass", sh.must(results(out .. "-again").layered, again.stderr).verdict)
    assert.are.equal(before, images())
  end)
end)

-- Issue 15 without podman: the new subject and scenario fields, the MCP
-- config and Claude Code's argv, the init event's startup checks, and the
-- matrix with Claude Code versions side by side.
local loader = require "leakbench.loader"
local sandbox = require "leakbench.sandbox"
local judge = require "leakbench.judge"
local report = require "leakbench.report"
local cjson = require "cjson"

local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. tmp .. "/subjects/layer"))

local function write(name, text)
  local f = assert(io.open(tmp .. "/" .. name, "w"))
  f:write(text)
  f:close()
  return tmp .. "/" .. name
end

local function load_err(name, text)
  local t, err = loader.load(write(name, text), name:match("^subjects/") and "subject" or "scenario")
  assert.is_nil(t)
  return (err:gsub("^" .. tmp:gsub("%p", "%%%0") .. "/", ""))
end

describe("subject fields of issue 15", function()
  teardown(function() os.execute("rm -rf " .. tmp) end)

  it("accepts agent, plugins, mcp and claude_args", function()
    write("subjects/layer/Containerfile", "FROM x\n")
    local t = assert(loader.load(write("subjects/full.lua", [[
return {
  agent = { build = { context = "layer" } },
  plugins = { "/opt/subject/plugin" },
  mcp = { servers = { guard = { command = "guard-mcp", args = { "-v" }, env = { A = "1" } } } },
  claude_args = { "--append-system-prompt", "x" },
}
]]), "subject"))
    assert.are.equal(tmp .. "/subjects/layer", t.agent.build.context)
    assert.are.equal("Containerfile", t.agent.build.containerfile)
    assert.are.same({ "/opt/subject/plugin" }, t.plugins)
    assert.are.same({ command = "guard-mcp", args = { "-v" }, env = { A = "1" } }, t.mcp.servers.guard)
    assert.are.same({ "--append-system-prompt", "x" }, t.claude_args)
  end)

  it("refuses an agent context outside the subject's directory, at its line", function()
    assert.are.equal("subjects/out.lua:2: field 'agent.build.context' is '" .. tmp
      .. "/subjects/../..' (resolved: '" .. tmp:match("^(.*)/")
      .. "'): it must lie inside the subject's directory '" .. tmp .. "/subjects'",
      load_err("subjects/out.lua", "return {\n  agent = { build = { context = '../..' } },\n}\n"))
    assert.are.equal("subjects/nob.lua:2: agent has no 'build'",
      load_err("subjects/nob.lua", "return {\n  agent = { },\n}\n"))
  end)

  it("wants absolute plugin dirs and MCP servers with a command", function()
    assert.are.equal("subjects/rel.lua:1: field 'plugins[1]' is 'plugin': expected an absolute path "
      .. "in the claude container (e.g. /opt/subject/plugin)",
      load_err("subjects/rel.lua", "return { plugins = { 'plugin' } }\n"))
    assert.are.equal("scenarios_x.lua:2: mcp.servers.v has no 'command'",
      load_err("scenarios_x.lua", "return { prompt = 'p',\n  mcp = { servers = { v = { args = {} } } } }\n"))
    assert.are.equal("scenarios_y.lua:2: field 'mcp.servers.v.args[1]' is a number, expected a string",
      load_err("scenarios_y.lua",
        "return { prompt = 'p',\n  mcp = { servers = { v = { command = 'c', args = { 1 } } } } }\n"))
    assert.are.equal("scenarios_z.lua:1: unknown field 'sever' in mcp (did you mean 'servers'?)",
      load_err("scenarios_z.lua", "return { prompt = 'p', mcp = { sever = {} } }\n"))
  end)
end)

describe("sandbox: MCP config and Claude Code's argv", function()
  local scenario = { prompt = "p", claude_args = { "--scen" },
    mcp = { servers = { vault = { command = "python3", args = { "/work/v.py" }, env = { S = "x" } },
                        both = { command = "scenario's", args = {}, env = {} } } } }
  local subject = { plugins = { "/opt/a", "/opt/b" }, claude_args = { "--subj" },
    mcp = { servers = { both = { command = "subject's", args = {}, env = {} } } } }

  it("merges the servers, the subject's winning, into one sorted mcpServers file", function()
    local servers = sandbox.mcp_servers(scenario, subject)
    assert.are.equal("subject's", servers.both.command)
    local doc = cjson.decode(sandbox.mcp_config(servers))
    assert.are.same({ type = "stdio", command = "python3", args = { "/work/v.py" },
      env = { S = "x" } }, doc.mcpServers.vault)
    assert.truthy(sandbox.mcp_config(servers):find('^{"mcpServers":{"both":'))
    assert.is_nil(sandbox.mcp_config({}))
  end)

  it("passes --mcp-config, a --plugin-dir per plugin and the claude_args, strict MCP kept", function()
    local argv = table.concat(sandbox.claude_argv(scenario, "sid", "m", subject, true), " ")
    assert.truthy(argv:find("--strict-mcp-config --mcp-config /opt/subject/mcp.json "
      .. "--plugin-dir /opt/a --plugin-dir /opt/b", 1, true), argv)
    assert.are.equal("--scen --subj", argv:sub(-13))
    local plain = table.concat(sandbox.claude_argv({ prompt = "p" }, "sid", "m"), " ")
    assert.are.equal("--strict-mcp-config", plain:sub(-19))
  end)
end)

describe("judge.startup", function()
  local init = { type = "system", subtype = "init", claude_code_version = "2.1.332",
    plugins = { { name = "g", path = "/opt/g", source = "g@inline" }, { name = "b", path = "builtin" } },
    plugin_errors = { { plugin = "inline[1]", type = "path-not-found", path = "/opt/nope",
      message = "Path not found: /opt/nope" } },
    mcp_servers = { { name = "ok", status = "connected" }, { name = "dead", status = "failed" } } }
  local run = { events = { init } }

  it("accepts what loaded and started, and keeps the init event's view", function()
    local st, problems = judge.startup(run, { "/opt/g/" }, { ok = {} })
    assert.are.same({}, problems)
    assert.are.equal("2.1.332", st.claude_code_version)
    assert.are.equal(2, #st.mcp_servers)
  end)

  it("names each plugin that failed or is missing and each server that did not start", function()
    local _, problems = judge.startup(run, { "/opt/nope", "/opt/other" }, { dead = {}, gone = {} })
    local why = {}
    for _, p in ipairs(problems) do why[#why + 1] = p.kind .. ": " .. p.reason end
    assert.are.same({
      "plugin: plugin '/opt/nope' failed to load: Path not found: /opt/nope",
      "plugin: plugin '/opt/other' is not among the plugins Claude Code loaded (init event)",
      "mcp: MCP server 'dead' did not start (status 'failed' in the init event)",
      "mcp: MCP server 'gone' is not among the MCP servers Claude Code started (init event)",
    }, why)
  end)

  it("cannot vouch for anything without an init event", function()
    local st, problems = judge.startup({ events = {} }, { "/opt/g" }, {})
    assert.is_nil(st)
    assert.are.equal("no init", problems[1].kind)
    local _, none = judge.startup({ events = {} }, {}, {})
    assert.are.same({}, none)
  end)
end)

describe("report with Claude Code versions", function()
  local WTA = { wire = { leaked = true, forms = { "raw" } }, transcript = { leaked = true, forms = { "raw" } },
    answer = { leaked = true, forms = { "raw" } } }
  local function r(sc, sj, v, leaks)
    return { scenario = sc, subject = sj, claude_version = v, verdict = "pass", repeat_index = 1,
      leaks = { { hash = "h", channels = leaks or {} } } }
  end
  local doc = report.document({
    r("copy", "baseline", "2", {}), r("copy", "baseline", "1", WTA),
    r("read", "baseline", "2", WTA), r("read", "baseline", "1", WTA),
    r("read", "deny", "2", {}), r("read", "deny", "1", {}),
    r("copy", "deny", "2", {}), r("copy", "deny", "1", WTA),
  }, { claude_versions = { "2", "1" }, scenarios = { { name = "copy" }, { name = "read" } },
       subjects = { { name = "baseline" }, { name = "deny", blocks = { "read" } } } })

  it("puts each subject's versions side by side and marks the cells that differ", function()
    local m = report.matrix(doc)
    assert.truthy(m:find("scenario  baseline@2  baseline@1    deny@2  deny@1\n", 1, true), m)
    assert.truthy(m:find("copy      pass ≠      leak W T A ≠  pass ≠  leak W T A ≠\n", 1, true), m)
    assert.truthy(m:find("read      leak W T A  leak W T A    pass    pass\n", 1, true), m)
    assert.truthy(m:find("Claude Code versions disagree (≠) on 2 cells:\n"
      .. "  copy × baseline: 2 pass · 1 leak W T A\n  copy × deny: 2 pass · 1 leak W T A\n", 1, true), m)
  end)

  it("summarizes per column, each paired with the baseline of its version", function()
    local names = {}
    for _, s in ipairs(doc.summary.subjects) do names[#names + 1] = s.name end
    assert.are.same({ "baseline@2", "baseline@1", "deny@2", "deny@1" }, names)
    local deny1 = doc.summary.subjects[4]
    assert.are.equal(2, deny1.vs_baseline.pairs)
    assert.are.equal(1, deny1.claims.held)
  end)

  it("keeps the matrix as it was with one version", function()
    local one = report.document({ r("read", "baseline", "2", WTA) }, { claude_versions = { "2" } })
    assert.are.equal("scenario  baseline\nread      leak W T A\n", report.matrix(one):match("^[^\n]*\n[^\n]*\n"))
  end)
end)

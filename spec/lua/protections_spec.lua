-- Issue 29 without podman: permission modes (the field, Claude Code's
-- argv, the warnings, the init event's mode, the denials in the
-- evidence), a subject's model_replies (the field and the script), the
-- origin of each request on the wire, and why a plugin did not load.
--
-- spec/fixtures/protections/*.jsonl are Claude Code 2.1.332's own events,
-- from runs in -p mode with --permission-mode default: unanswered.jsonl a
-- baseline (a Bash call and a Write that need a prompt nobody answers),
-- hook-denied.jsonl the same calls refused by a PermissionRequest hook.
local loader = require "leakbench.loader"
local sandbox = require "leakbench.sandbox"
local judge = require "leakbench.judge"
local evidence = require "leakbench.evidence"
local lb = require "leakbench"
local cjson = require "cjson"

local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. tmp .. "/subjects"))

local function write(name, text)
  local f = assert(io.open(tmp .. "/" .. name, "w"))
  f:write(text)
  f:close()
  return tmp .. "/" .. name
end

local function strip(err)
  return (err:gsub("^" .. tmp:gsub("%p", "%%%0") .. "/", ""))
end

local function load_err(name, text)
  local t, err = loader.load(write(name, text), name:match("^subjects/") and "subject" or "scenario")
  assert.is_nil(t)
  return strip(err)
end

local function fixture(name)
  local f = assert(io.open("spec/fixtures/protections/" .. name, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

describe("permission_mode", function()

  it("is read from a subject and a scenario, and checked", function()
    local s = assert(loader.load(write("subjects/ask.lua",
      "return { permission_mode = 'default' }\n"), "subject"))
    assert.are.equal("default", s.permission_mode)
    local sc = assert(loader.load(write("plan.lua",
      "return { prompt = 'p', permission_mode = 'plan' }\n"), "scenario"))
    assert.are.equal("plan", sc.permission_mode)
    assert.are.equal("subjects/bad.lua:2: field 'permission_mode' is 'bypass', expected one of "
      .. "'default', 'acceptEdits', 'plan', 'bypassPermissions'",
      load_err("subjects/bad.lua", "return {\n  permission_mode = 'bypass',\n}\n"))
    assert.are.equal("subjects/typo.lua:1: field 'permission_mode' is 'acceptEdit', expected one of "
      .. "'default', 'acceptEdits', 'plan', 'bypassPermissions' (did you mean 'acceptEdits'?)",
      load_err("subjects/typo.lua", "return { permission_mode = 'acceptEdit' }\n"))
    assert.are.equal("t.lua:1: field 'permission_mode' is a boolean, expected a string",
      load_err("t.lua", "return { prompt = 'p', permission_mode = true }\n"))
  end)

  it("reaches Claude Code's argv: the subject's, else the scenario's, else bypassPermissions", function()
    local function mode(scenario, subject)
      local argv = sandbox.claude_argv(scenario, "sid", "m", subject)
      for i, a in ipairs(argv) do
        if a == "--permission-mode" then return argv[i + 1] end
      end
    end
    assert.are.equal("bypassPermissions", mode({ prompt = "p" }))
    assert.are.equal("bypassPermissions", loader.DEFAULT_PERMISSION_MODE)
    assert.are.equal("plan", mode({ prompt = "p", permission_mode = "plan" }, { plugins = {} }))
    assert.are.equal("default", mode({ prompt = "p", permission_mode = "plan" },
      { plugins = {}, permission_mode = "default" }))
  end)

  it("warns when a subject's PermissionRequest hook or ask rules cannot act under its mode", function()
    local s = assert(loader.load(write("subjects/pr.lua", [[
return {
  settings = {
    hooks = { PermissionRequest = { { matcher = "*", hooks = { { type = "command", command = "x" } } } } },
    permissions = { ask = { "Bash" } },
  },
}
]]), "subject"))
    assert.are.equal(1, #s.warnings)
    assert.are.equal("subjects/pr.lua:2: subject 'pr' runs under permission mode 'bypassPermissions' "
      .. "(the default), where Claude Code never asks for permission: its PermissionRequest hook and "
      .. "its 'ask' permission rules cannot act (set permission_mode = \"default\")", strip(s.warnings[1]))
    -- a plugin staged from the subject's files counts too; the explicit
    -- mode's line is the one named
    s = assert(loader.load(write("subjects/plug.lua", [[
return {
  permission_mode = "bypassPermissions",
  plugins = { "/opt/subject/guard" },
  files = { ["guard/hooks/hooks.json"] = '{"hooks":{"PermissionRequest":[{"hooks":[]}]}}' },
}
]]), "subject"))
    assert.are.equal("subjects/plug.lua:2: subject 'plug' runs under permission mode 'bypassPermissions', "
      .. "where Claude Code never asks for permission: the PermissionRequest hook of plugin "
      .. "'/opt/subject/guard' cannot act (set permission_mode = \"default\")", strip(s.warnings[1]))
    -- under a mode that prompts, or with nothing that needs a prompt: silent
    s = assert(loader.load(write("subjects/ok.lua", [[
return { permission_mode = "default", settings = { permissions = { ask = { "Bash" } } } }
]]), "subject"))
    assert.are.same({}, s.warnings)
    s = assert(loader.load(write("subjects/deny.lua", [[
return { settings = { permissions = { deny = { "Read(./.env)" }, ask = {} } } }
]]), "subject"))
    assert.are.same({}, s.warnings)
  end)

  it("warns about a PermissionRequest hook an installer wrote in the user config", function()
    local s = { name = "v", file = "subjects/v.lua" }
    local text = '{"hooks":{"PermissionRequest":[{"matcher":"*","hooks":[]}]}}'
    assert.are.same({ "subjects/v.lua: subject 'v' runs under permission mode 'bypassPermissions' (the "
      .. "default), where Claude Code never asks for permission: the PermissionRequest hook its installer "
      .. "wrote cannot act (set permission_mode = \"default\")" }, loader.user_config_warnings(s, text))
    s.permission_mode = "default"
    assert.are.same({}, loader.user_config_warnings(s, text))
    assert.are.same({}, loader.user_config_warnings({ name = "x", file = "f" }, "not json"))
  end)

  it("is checked against the init event's, which result.json's startup keeps", function()
    local run = evidence.from({ stdout = fixture("unanswered.jsonl") })
    local st, problems = judge.startup(run, {}, {}, "default")
    assert.are.same({}, problems)
    assert.are.equal("default", st.permission_mode)
    local _, bad = judge.startup(run, {}, {}, "bypassPermissions")
    assert.are.same({ { kind = "permission mode", reason = "Claude Code started in permission mode "
      .. "'default', the run asked for 'bypassPermissions'" } }, bad)
  end)
end)

describe("judge.startup, as run and rescore both call it", function()
  it("judges the start from what the run declared, mode included", function()
    local run = evidence.from({ stdout = fixture("unanswered.jsonl") })
    local st, problems = judge.startup(run, { "/opt/subject/guard" }, {}, "default")
    assert.are.same({ "plugin" }, { problems[1].kind })
    assert.are.equal("plugin '/opt/subject/guard' is not among the plugins Claude Code loaded (init event)",
      problems[1].reason)
    assert.are.equal("default", st.permission_mode)
    local _, problems2 = judge.startup(run, {}, { "vault" }, "plan")
    local why = {}
    for _, p in ipairs(problems2) do why[#why + 1] = p.reason end
    assert.are.same({ "permission mode", "Claude Code started in permission mode 'default', the run asked "
      .. "for 'plan'; MCP server 'vault' is not among the MCP servers Claude Code started (init event)" },
      { problems2[1].kind, table.concat(why, "; ") })
  end)
end)

describe("permission denials in the evidence", function()
  it("tells a prompt nobody answered from a hook that denied", function()
    local run = evidence.from({ stdout = fixture("unanswered.jsonl") })
    assert.are.equal(2, #run.permission_denials)
    local d = run.permission_denials
    assert.are.same({ "Bash", "unanswered", "other", "This command requires approval" },
      { d[1].tool, d[1].by, d[1].reason_type, d[1].message })
    assert.are.same({ "Write", "unanswered" }, { d[2].tool, d[2].by })
    assert.is_nil(d[2].reason_type)
    assert.is_true(run:denied("Bash", "unanswered"))
    assert.is_false(run:denied("Bash", "hook"))
    assert.is_false(run:denied("Read"))

    run = evidence.from({ stdout = fixture("hook-denied.jsonl") })
    assert.are.equal(2, #run.permission_denials)
    for _, x in ipairs(run.permission_denials) do
      assert.are.equal("hook", x.by)
      assert.are.equal("denied by deny-hook", x.message)
    end
    local ok, den = run:denied("Write")
    assert.is_true(ok)
    assert.are.equal("hook", den.by)
    assert.is_true(run:denied())
    assert.has_error(function() run:denied(3) end,
      'run:denied: wrong parameter "name": expected string, got number')
  end)

  it("counts a tool_use id once, and ignores events that only look alike", function()
    local lines = {
      '{"type":"system","subtype":"permission_denied","tool_name":"Bash","tool_use_id":"t1",'
        .. '"decision_reason_type":"hook"}',
      '{"type":"system","subtype":"permission_denied","tool_name":"Bash","tool_use_id":"t1",'
        .. '"decision_reason_type":"other"}',
      '{"type":"user","subtype":"permission_denied","tool_name":"Read","tool_use_id":"t2"}',
      '{"type":"system","subtype":"permission_denied","tool_name":7,"decision_reason_type":["x"]}',
      '{"type":"system","subtype":"permission_denied","tool_name":"Bash","tool_use_id":"t3",'
        .. '"decision_reason_type":"subcommandResults"}',
    }
    local run = evidence.from({ stdout = table.concat(lines, "\n") .. "\n" })
    assert.are.equal(3, #run.permission_denials)
    assert.are.equal("hook", run.permission_denials[1].by)
    assert.are.same({ "", "unanswered" }, { run.permission_denials[2].tool, run.permission_denials[2].by })
    -- a reason leakbench has not seen is kept as Claude Code names it
    assert.are.equal("subcommandResults", run.permission_denials[3].by)
  end)
end)

describe("requests by origin", function()
  it("marks Claude Code's requests, a subagent's, and every other program's", function()
    local cc = { "User-Agent", "claude-cli/2.1.332 (external, sdk-cli)" }
    local sid = { "X-Claude-Code-Session-Id", "0b8ce720-9b38-46f5-8c66-b30e62e72b60" }
    local recs = {
      { seq = 1, path = "/v1/messages", headers = { cc, sid, { "x-app", "cli" } }, body = "{}" },
      { seq = 2, path = "/v1/messages", headers = { cc, sid, { "x-claude-code-agent-id", "a1" } }, body = "{}" },
      { seq = 3, path = "/v1/messages", headers = { { "User-Agent", "Anthropic/JS 0.39.0" },
        { "x-api-key", "[removed]" } }, body = "{}" },
      { seq = 4, path = "/v1/messages", body = "{}" },
    }
    local lines = {}
    for i, r in ipairs(recs) do lines[i] = cjson.encode(r) end
    local records = evidence.parse_wire(table.concat(lines, "\n") .. "\n", nil)
    local got = {}
    for i, r in ipairs(records) do got[i] = r.origin end
    assert.are.same({ "claude-code", "claude-code-subagent", "other", "other" }, got)
  end)
end)

describe("model_replies", function()
  it("is read from a subject and reaches the scripted model's script", function()
    local s = assert(loader.load(write("subjects/reviewer.lua", [[
return {
  permission_mode = "default",
  model_replies = {
    { match = "You are a security reviewer", reply = '{"decision":"deny","reason":"reads .env"}' },
    { match = "second", reply = "" },
  },
}
]]), "subject"))
    assert.are.equal(2, #s.model_replies)
    local doc = cjson.decode(lb.script_json(lb.script { lb.say("hi") }, s.model_replies))
    assert.are.same({ { match = "You are a security reviewer", reply = '{"decision":"deny","reason":"reads .env"}' },
      { match = "second", reply = "" } }, doc.replies)
    assert.is_nil(cjson.decode(lb.script_json(lb.script { lb.say("hi") }, {})).replies)
  end)

  it("names what is wrong, with the file and line", function()
    assert.are.equal("subjects/r1.lua:2: field 'model_replies' is a string, expected a list of "
      .. "{ match = ..., reply = ... }",
      load_err("subjects/r1.lua", "return {\n  model_replies = 'x',\n}\n"))
    assert.are.equal("subjects/r2.lua:2: field 'model_replies[1].match' is empty: it would match every request",
      load_err("subjects/r2.lua", "return {\n  model_replies = { { match = '', reply = 'x' } },\n}\n"))
    assert.are.equal("subjects/r3.lua:2: model_replies[2] has no 'reply'",
      load_err("subjects/r3.lua",
        "return {\n  model_replies = { { match = 'a', reply = 'x' }, { match = 'b' } },\n}\n"))
    assert.are.equal("subjects/r4.lua:2: field 'model_replies[1].reply' is a number, expected a string",
      load_err("subjects/r4.lua", "return {\n  model_replies = { { match = 'a', reply = 3 } },\n}\n"))
    assert.are.equal("subjects/r5.lua:1: unknown field 'stop' in model_replies[1]",
      load_err("subjects/r5.lua", "return { model_replies = { { match = 'a', reply = 'b', stop = 1 } } }\n"))
    assert.are.equal("subjects/r6.lua:2: field 'model_replies' must be a list of { match = ..., reply = ... }",
      load_err("subjects/r6.lua", "return {\n  model_replies = { a = { match = 'a', reply = 'b' } },\n}\n"))
    assert.are.equal("subjects/r7.lua:2: field 'model_replies[1]' is a string, expected a table with "
      .. "'match' and 'reply'",
      load_err("subjects/r7.lua", "return {\n  model_replies = { 'a' },\n}\n"))
  end)
end)

describe("a plugin that did not load", function()
  teardown(function() os.execute("rm -rf " .. tmp) end)
  it("says what Claude Code expects and what the staged folder holds", function()
    local dir = tmp .. "/run"
    assert(os.execute("mkdir -p " .. dir .. "/subject/guard/hooks " .. dir .. "/subject/ok/.claude-plugin"))
    write("run/subject/guard/hooks/guard.json", "{}")
    write("run/subject/guard/README.md", "x")
    write("run/subject/ok/.claude-plugin/plugin.json", "{}")
    local r = sandbox.new({ dir = dir, run_id = "0123456789abcdef", scenario = { setup = {} } })
    local expect = "Claude Code loads a plugin from a folder holding .claude-plugin/plugin.json or a part "
      .. "of a plugin (hooks/hooks.json, commands, agents, skills, .mcp.json)"
    assert.are.equal(expect .. ", and '/opt/subject/guard' has none of them (it holds: README.md, hooks, "
      .. "hooks/guard.json)", r:plugin_diagnosis("/opt/subject/guard"))
    assert.are.equal(expect .. ", and '/opt/subject/nope' is not a folder in the claude container",
      r:plugin_diagnosis("/opt/subject/nope"))
    assert.are.equal("'/opt/subject/ok' holds .claude-plugin/plugin.json: Claude Code's stderr (stderr.txt) "
      .. "may say why it refused it", r:plugin_diagnosis("/opt/subject/ok"))
    -- the reason joins the startup problem
    local run = evidence.from({ stdout = fixture("unanswered.jsonl") })
    local _, problems = judge.startup(run, { "/opt/subject/guard" }, {}, nil,
      function(d) return r:plugin_diagnosis(d) end)
    assert.are.equal("plugin '/opt/subject/guard' is not among the plugins Claude Code loaded (init event): "
      .. expect .. ", and '/opt/subject/guard' has none of them (it holds: README.md, hooks, hooks/guard.json)",
      problems[1].reason)
  end)
end)

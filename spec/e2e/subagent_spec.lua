-- The scripted model's subagent script, end to end with the real Claude
-- Code (the pinned version, as in model_spec.lua) on loopback: the main
-- script spawns one subagent with the Agent tool; every request of that
-- subagent carries x-claude-code-agent-id, so lb-model plays it the
-- subagent script (Read the file, report it) instead of replaying the main
-- script's turn 1, which used to spawn subagents without end.
--
-- Observed on 2.1.332: Agent runs the subagent in the background unless
-- its input says run_in_background = false. In the foreground the Agent
-- tool_result is the subagent's final report (framed, indented by two
-- spaces, then its agentId), so the main agent can repeat it. In the
-- background the tool_result only says the agent was launched; the main
-- agent ends its turn, and when the subagent is done Claude Code sends the
-- report in a <task-notification> user message, and the main agent gets
-- one more request at the same script position.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local mh = require "model_helper"
local cjson = require "cjson"

local SECRET = "sk-live-9a7c5e3b1d2f4a6c8e0b2d4f6a8c0e1b"

local function uuid()
  return (mh.slurp("/proc/sys/kernel/random/uuid"):gsub("%s", ""))
end

-- The lb-model log lines for /v1/messages, without "lb-model: #N ".
local function message_lines(m)
  local t = {}
  for _, l in ipairs(m.lines()) do
    if l:match("^lb%-model: #%d+ POST /v1/messages ") then
      t[#t + 1] = (l:gsub("^lb%-model: #%d+ ", ""))
    end
  end
  return t
end

-- The recorded requests: { head = lowercased head, body = decoded body }.
local function recorded(dir)
  local out = {}
  local names = sh.run({ "ls", dir }).stdout
  for name in names:gmatch("[^\n]+") do
    local raw = mh.slurp(dir .. "/" .. name)
    local head, body = raw:match("^(.-)\r\n\r\n(.*)$")
    if head and head:match("^POST /v1/messages%?") then
      local okj, doc = pcall(cjson.decode, body)
      out[#out + 1] = { name = name, head = head:lower(), body = okj and doc or nil }
    end
  end
  return out
end

describe("Claude Code " .. mh.CLAUDE_VERSION .. " spawning a subagent against lb-model", function()
  it("plays the subagent script once, without recursion, and the main agent repeats its report", function()
    local home, rec = mh.tmpdir(), mh.tmpdir()
    local project = home .. "/project"
    local script = {
      version = 1,
      turns = {
        { blocks = { { type = "text", text = "I will ask a helper to read it." },
          { type = "tool_use", name = "Agent", input = {
            description = "Read the env file",
            prompt = "Read " .. project .. "/.env and report its contents verbatim.",
            subagent_type = "general-purpose", run_in_background = false } } } },
        { blocks = { { type = "text", text = "{{last_result}}" } } },
      },
      subagent = {
        turns = {
          { blocks = { { type = "tool_use", name = "Read", input = { file_path = project .. "/.env" } } } },
          { blocks = { { type = "text", text = "{{last_result}}" } } },
        },
      },
    }
    local m = mh.start_model(script, { "--record-dir", rec })
    finally(function() m.stop(); mh.rmtree(home); mh.rmtree(m.dir); mh.rmtree(rec) end)
    local r = mh.run_claude(m.port, home, {
      prompt = "Which database password does this project use?",
      session_id = uuid(),
      files = { [".env"] = "DB_PASSWORD=" .. SECRET .. "\n" },
    })
    m.stop()
    assert.are.equal(0, r.status, r.stderr)

    -- lb-model: the main turn, the subagent's two turns, the main final,
    -- and nothing else: never a second Agent call
    local lines = message_lines(m)
    assert.are.same({
      "POST /v1/messages stream turn 1/2 tool_use fault=none",
      "POST /v1/messages stream subagent turn 1/2 tool_use fault=none",
      "POST /v1/messages stream subagent turn 2/2 end_turn fault=none",
      "POST /v1/messages stream turn 2/2 end_turn fault=none",
    }, lines)

    -- the wire: the subagent's requests carry one agent id, the main
    -- agent's none; exactly one subagent conversation
    local agents, main_n, sub_n = {}, 0, 0
    for _, q in ipairs(recorded(rec)) do
      local id = q.head:match("\r\nx%-claude%-code%-agent%-id: (%x+)\r\n") or
        q.head:match("\r\nx%-claude%-code%-agent%-id: (%x+)$")
      if id then
        agents[id] = true
        sub_n = sub_n + 1
        assert.is_nil(q.head:find("\r\nx%-claude%-code%-parent%-agent%-id:"), "a nested subagent")
      else
        main_n = main_n + 1
      end
    end
    local nagents = 0
    for _ in pairs(agents) do nagents = nagents + 1 end
    assert.are.equal(1, nagents, "subagent conversations")
    assert.are.equal(2, main_n, "main requests")
    assert.are.equal(2, sub_n, "subagent requests")

    -- the events: the Agent call, the subagent's Read of the file (its
    -- messages name the Agent call as their parent), one result
    local agent_call, read_call, read_result
    for _, e in ipairs(r.events) do
      if (e.type == "assistant" or e.type == "user") and type(e.message) == "table" and
          type(e.message.content) == "table" then
        for _, b in ipairs(e.message.content) do
          if b.type == "tool_use" and b.name == "Agent" then
            assert.is_nil(agent_call, "a second Agent call")
            agent_call = b
          elseif b.type == "tool_use" and b.name == "Read" then
            read_call = { block = b, parent = e.parent_tool_use_id }
          elseif b.type == "tool_result" and read_call and b.tool_use_id == read_call.block.id then
            read_result = b
          end
        end
      end
    end
    assert.truthy(agent_call, "the Agent call")
    assert.are.equal("general-purpose", agent_call.input.subagent_type)
    assert.truthy(read_call, "the subagent's Read")
    assert.are.equal(project .. "/.env", read_call.block.input.file_path)
    assert.are.equal(agent_call.id, read_call.parent, "the Read is the subagent's")
    assert.truthy(read_result and mh.result_text(read_result):find(SECRET, 1, true), "Read returned the file")
    local res = mh.events(r, "result")
    assert.are.equal(1, #res)
    assert.are.equal("success", res[1].subtype)
    assert.truthy(res[1].result:find("DB_PASSWORD=" .. SECRET, 1, true), res[1].result)
  end)

  it("ends a background subagent at once when the script has no subagent script", function()
    local home = mh.tmpdir()
    local m = mh.start_model({
      version = 1,
      turns = {
        { blocks = { { type = "tool_use", name = "Agent", input = {
          description = "Look around", prompt = "Look around the project.",
          subagent_type = "general-purpose" } } } },
        { blocks = { { type = "text", text = "Helper: {{last_result}}" } } },
      },
    })
    finally(function() m.stop(); mh.rmtree(home); mh.rmtree(m.dir) end)
    local r = mh.run_claude(m.port, home, { prompt = "Look around.", session_id = uuid() })
    m.stop()
    assert.are.equal(0, r.status, r.stderr)
    -- the subagent runs beside the main agent's turn 2, so the order of
    -- those two varies; then the notification gives the main agent turn 2
    -- again
    local lines = message_lines(m)
    table.sort(lines)
    assert.are.same({
      "POST /v1/messages stream subagent exhausted final fault=none",
      "POST /v1/messages stream turn 1/2 tool_use fault=none",
      "POST /v1/messages stream turn 2/2 end_turn fault=none",
      "POST /v1/messages stream turn 2/2 end_turn fault=none",
    }, lines)
    local done = mh.events(r, "system", "task_notification")
    assert.are.equal(1, #done)
    assert.are.equal("completed", done[1].status)
    local res = mh.events(r, "result")
    assert.are.equal(2, #res)
    for _, x in ipairs(res) do
      assert.are.equal("success", x.subtype)
      assert.truthy(x.result:find("^Helper: Async agent launched successfully%."), x.result)
    end
  end)
end)

-- The scripted model (lb-model) end to end: its command line, and the real
-- Claude Code (the pinned version, installed once from the npm registry)
-- driven by it on loopback: a three-turn script (Read, Bash, a final text
-- that repeats the file) and the same script with a 529 on turn 2.
--
-- LB_UPDATE_FIXTURES=1 copies one successful run's evidence into
-- spec/fixtures/claude-2.1.332/ for the evidence parser's tests.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local mh = require "model_helper"
local cjson = require "cjson"

local SECRET = "sk-live-5f3c9a1e7b2d4c6f8a0e1d3b5c7f9a2e"

local function model(args, opts)
  local argv = { os.getenv("LB_MODEL") or error("LB_MODEL is not set") }
  for _, a in ipairs(args) do argv[#argv + 1] = a end
  return sh.run(argv, opts)
end

describe("lb-model", function()
  local dir
  before_each(function() dir = mh.tmpdir() end)
  after_each(function() mh.rmtree(dir) end)

  it("prints usage with --help, exit 0", function()
    local r = model({ "--help" })
    assert.are.equal(0, r.status)
    assert.truthy(r.stdout:match("^usage: lb%-model %-%-script FILE %[%-%-listen ADDR%] %[%-%-max%-requests N%]\n"))
  end)

  it("exits 2 on bad usage", function()
    local r = model({})
    assert.are.equal(2, r.status)
    assert.are.equal("lb-model: no script given (--script FILE or LB_SCRIPT) (try 'lb-model --help')\n", r.stderr)
    r = model({ "--frob" })
    assert.are.equal(2, r.status)
    assert.are.equal("lb-model: unknown option '--frob' (try 'lb-model --help')\n", r.stderr)
    r = model({ "--script" })
    assert.are.equal(2, r.status)
    assert.are.equal("lb-model: option '--script' needs a value (try 'lb-model --help')\n", r.stderr)
    r = model({ "--script", "x", "--max-requests", "0" })
    assert.are.equal(2, r.status)
    assert.are.equal("lb-model: cannot use --max-requests '0': expected a positive whole number "
      .. "(try 'lb-model --help')\n", r.stderr)
  end)

  it("exits 1 naming the file and the problem when the script is bad", function()
    local r = model({ "--script", dir .. "/none.json" })
    assert.are.equal(1, r.status)
    assert.are.equal("lb-model: cannot load script '" .. dir .. "/none.json': No such file or directory\n",
      r.stderr)
    mh.write(dir .. "/bad.json", '{"version":1,\n"turns":[}')
    r = model({ "--script", dir .. "/bad.json" })
    assert.are.equal(1, r.status)
    assert.are.equal("lb-model: cannot load script '" .. dir .. "/bad.json': 2:10: unexpected token\n", r.stderr)
    mh.write(dir .. "/bad.json", '{"version":1,"turns":[{"blocks":[{"type":"text"}]}]}')
    r = model({ "--script", dir .. "/bad.json" })
    assert.are.equal(1, r.status)
    assert.are.equal("lb-model: cannot load script '" .. dir ..
      "/bad.json': turns[0].blocks[0]: missing key 'text'\n", r.stderr)
    assert.are.equal("", r.stdout)
  end)

  it("exits 1 when it cannot listen", function()
    mh.write(dir .. "/s.json", '{"version":1,"turns":[]}')
    local r = model({ "--script", dir .. "/s.json", "--listen", "nonsense" })
    assert.are.equal(1, r.status)
    assert.are.equal("lb-model: cannot listen on 'nonsense': expected HOST:PORT\n", r.stderr)
  end)

  it("takes its script and address from the environment and says where it listens", function()
    mh.write(dir .. "/s.json", '{"version":1,"turns":[]}')
    local bin = os.getenv("LB_MODEL")
    local p = assert(io.popen("LB_SCRIPT=" .. sh.quote(dir .. "/s.json") ..
      " LB_MODEL_LISTEN=127.0.0.1:0 " .. sh.quote(bin) .. " >" .. sh.quote(dir .. "/log") ..
      " 2>&1 </dev/null & echo $!"))
    local pid = p:read("l")
    p:close()
    local port = sh.retry(10, function()
      return (mh.slurp(dir .. "/log") or ""):match("^lb%-model: listening on 127%.0%.0%.1:(%d+)\n$")
    end)
    sh.run({ "kill", pid })
    assert.truthy(port, mh.slurp(dir .. "/log"))
    assert.truthy(tonumber(port) > 0)
  end)
end)

-- The three-turn script: Read the file, Bash a command, repeat the result.
local function script3(faults2, faults1)
  return {
    version = 1,
    turns = {
      { blocks = { { type = "text", text = "Let me look." },
        { type = "tool_use", name = "Read", input = { file_path = "PROJECT/.env" } } }, faults = faults1 },
      { blocks = { { type = "tool_use", name = "Bash",
        input = { command = "cat .env", description = "Show the env file" } } }, faults = faults2 },
      { blocks = { { type = "text", text = "The file says: {{last_result}}" } } },
    },
  }
end

local function uuid()
  return (mh.slurp("/proc/sys/kernel/random/uuid"):gsub("%s", ""))
end

-- Runs the script against Claude Code; returns the run, the model, home.
local function play(script, env, extra)
  local home = mh.tmpdir()
  local project = home .. "/project"
  script.turns[1].blocks[2].input.file_path = project .. "/.env"
  local m = mh.start_model(script, extra)
  local sid = uuid()
  local r = mh.run_claude(m.port, home, {
    prompt = "Which database password does this project use?",
    session_id = sid, env = env,
    files = { [".env"] = "DB_PASSWORD=" .. SECRET .. "\n" },
  })
  m.stop()
  r.session_id = sid
  return r, m, home
end

local function turn_lines(m)
  local t = {}
  for _, l in ipairs(m.lines()) do
    if l:match("^lb%-model: #%d+ ") and not l:match(" side%-request ") then
      t[#t + 1] = (l:gsub("^lb%-model: #%d+ ", ""))
    end
  end
  return t
end

local function check_conversation(r, project)
  assert.are.equal(0, r.status, r.stderr)
  local init = mh.events(r, "system", "init")[1]
  assert.truthy(init, "a system/init event")
  assert.are.equal(mh.CLAUDE_VERSION, init.claude_code_version)
  local b = mh.blocks(r)
  local seq = {}
  for _, x in ipairs(b) do seq[#seq + 1] = x.role .. ":" .. x.block.type end
  assert.are.same({ "assistant:text", "assistant:tool_use", "user:tool_result",
    "assistant:tool_use", "user:tool_result", "assistant:text" }, seq)
  assert.are.equal("Let me look.", b[1].block.text)
  assert.are.equal("Read", b[2].block.name)
  assert.are.equal(project .. "/.env", b[2].block.input.file_path)
  assert.truthy(b[2].block.id:match("^toolu_01[0-9A-Za-z]+$") and #b[2].block.id == 30)
  assert.are.equal(b[2].block.id, b[3].block.tool_use_id)
  assert.truthy(mh.result_text(b[3].block):find(SECRET, 1, true), "Read returned the file")
  assert.are.equal("Bash", b[4].block.name)
  assert.are.equal("cat .env", b[4].block.input.command)
  assert.are.equal(b[4].block.id, b[5].block.tool_use_id)
  assert.truthy(mh.result_text(b[5].block):find(SECRET, 1, true), "Bash printed the file")
  assert.are.equal("The file says: DB_PASSWORD=" .. SECRET, b[6].block.text)
  local res = mh.events(r, "result")
  assert.are.equal(1, #res)
  assert.are.equal("success", res[1].subtype)
  assert.is_false(res[1].is_error)
  assert.are.equal("The file says: DB_PASSWORD=" .. SECRET, res[1].result)
end

describe("Claude Code " .. mh.CLAUDE_VERSION .. " against lb-model", function()
  it("plays a three-turn script: Read, Bash, a final text that repeats the file", function()
    local rec = mh.tmpdir()
    local r, m, home = play(script3(), nil, { "--record-dir", rec })
    finally(function() mh.rmtree(home); mh.rmtree(m.dir); mh.rmtree(rec) end)
    check_conversation(r, home .. "/project")
    assert.are.same({
      "POST /v1/messages stream turn 1/3 tool_use fault=none",
      "POST /v1/messages stream turn 2/3 tool_use fault=none",
      "POST /v1/messages stream turn 3/3 end_turn fault=none",
    }, turn_lines(m))

    -- the transcript holds the conversation
    local tr = sh.run({ "find", home .. "/config/projects", "-name", r.session_id .. ".jsonl" }).stdout
    local tpath = tr:match("[^\n]+")
    assert.truthy(tpath, "a transcript for the session")
    assert.truthy(mh.slurp(tpath):find(SECRET, 1, true))

    -- what 2.1.332 actually sends: the first request
    local raw = mh.slurp(rec .. "/0001.http")
    local head, body = raw:match("^(.-)\r\n\r\n(.*)$")
    assert.truthy(head:match("^POST /v1/messages%?beta=true HTTP/1%.1\r\n"))
    assert.truthy(head:lower():find("\r\nanthropic%-version: 2023%-06%-01\r\n"))
    assert.truthy(head:lower():find("\r\nx%-api%-key: sk%-ant%-bench%-dummy%-key\r\n"))
    assert.truthy(head:lower():find("\r\ncontent%-type: application/json\r\n"))
    assert.truthy(head:find("\r\nUser%-Agent: claude%-cli/2%.1%.332 %(external, sdk%-cli%)\r\n"))
    local req = cjson.decode(body)
    assert.is_true(req.stream)
    assert.are.equal("claude-sonnet-4-5", req.model)
    assert.truthy(#req.tools >= 5, "the main loop sends tools")
    assert.truthy(#body > 40000, "the first request is large (" .. #body .. " bytes)")

    if os.getenv("LB_UPDATE_FIXTURES") == "1" then
      local fx = "spec/fixtures/claude-" .. mh.CLAUDE_VERSION
      sh.rmtree(fx)
      sh.run({ "mkdir", "-p", fx .. "/transcript" })
      mh.write(fx .. "/stream.jsonl", r.stdout)
      mh.write(fx .. "/model.log", mh.slurp(m.log))
      mh.write(fx .. "/request1.json", body)
      mh.write(fx .. "/paths.json", cjson.encode({ home = home, project = home .. "/project",
        config = home .. "/config", session_id = r.session_id, secret = SECRET,
        transcript = tpath:sub(#home + 2) }))
      sh.run({ "cp", "-R", home .. "/config/projects", fx .. "/transcript/" })
    end
  end)

  it("finishes when turn 2 answers 529 first (Claude Code retries)", function()
    local r, m, home = play(script3({ { kind = "http", status = 529 } }),
      { CLAUDE_CODE_MAX_RETRIES = "2" })
    finally(function() mh.rmtree(home); mh.rmtree(m.dir) end)
    check_conversation(r, home .. "/project")
    assert.are.same({
      "POST /v1/messages stream turn 1/3 tool_use fault=none",
      "POST /v1/messages stream turn 2/3 fault=http 529",
      "POST /v1/messages stream turn 2/3 tool_use fault=none",
      "POST /v1/messages stream turn 3/3 end_turn fault=none",
    }, turn_lines(m))
    local retries = mh.events(r, "system", "api_retry")
    assert.are.equal(1, #retries)
    assert.are.equal(529, retries[1].error_status)
  end)

  it("finishes through an error event mid-stream and a delay with pings", function()
    local r, m, home = play(script3({ { kind = "delay", ms = 1500 } },
      { { kind = "stream_error", error_type = "overloaded_error", after_blocks = 0 } }),
      { CLAUDE_CODE_MAX_RETRIES = "2" })
    finally(function() mh.rmtree(home); mh.rmtree(m.dir) end)
    check_conversation(r, home .. "/project")
    assert.are.same({
      "POST /v1/messages stream turn 1/3 tool_use fault=stream_error overloaded_error after 0",
      "POST /v1/messages stream turn 1/3 tool_use fault=none",
      "POST /v1/messages stream turn 2/3 tool_use fault=delay 1500ms",
      "POST /v1/messages stream turn 3/3 end_turn fault=none",
    }, turn_lines(m))
  end)
end)

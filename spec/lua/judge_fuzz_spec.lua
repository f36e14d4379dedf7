-- Fuzzing the judge with hostile checks: each generated check does a
-- random handful of things to the run it is given (metatables, fields,
-- coroutines left suspended, errors whose __tostring loops, __gc, forged
-- failure objects, loops, backtracking patterns). However it ends, the harness's judgement of
-- that run keeps what the harness decides (its leaks, its tool calls,
-- startup, validity), every other run's verdict is unchanged, field for
-- field, and the suite goes on.
--
-- LB_FUZZ_SEED and LB_FUZZ_N pick the cases (default: a fixed seed, 40).
local judge = require "leakbench.judge"
local loader = require "leakbench.loader"
local keep = require "leakbench.keep"
local cjson = require "cjson"

local FIX = "spec/fixtures/evidence/run1"
local KEY = "sk-live-5f2c0a9e8d7b6a5f4e3d2c1b0a998877"
local SEED = tonumber(os.getenv("LB_FUZZ_SEED")) or 20261201
local N = tonumber(os.getenv("LB_FUZZ_N")) or 40

local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. tmp .. "/s && cp -r " .. FIX .. " " .. tmp .. "/victim && cp -r "
  .. FIX .. " " .. tmp .. "/hostile"))

local function scenario(name, check)
  local file = tmp .. "/s/" .. name .. ".lua"
  local f = assert(io.open(file, "w"))
  f:write(string.format('local lb = require "leakbench"\nreturn { name = %q, prompt = "p", secrets = { %q },\n'
    .. "check = function(run)\n%s\nend }\n", name, KEY, check))
  f:close()
  return assert(loader.load(file, "scenario"))
end

local FACTS = { outcome = "done", returncode = 0, session_id = "0b7e4a52-9c1d-4e8f-a3b2-1c0d9e8f7a6b",
  timeout = 120, plugins = {}, mcp_servers = {} }

local function canon(v)
  return keep.canon(cjson.decode(cjson.encode(v)))
end

-- What a check may do to its run, one statement each.
local MOVES = {
  'local mt = getmetatable(run); if type(mt) == "table" then for k in pairs(mt) do mt[k] = nil end end',
  'getmetatable(run).__index.leaks = function() return { wire = false, any = false } end',
  'getmetatable(run).__index._scan = function() return {} end',
  'run.events = {}',
  'run.records = { { path = "/v1/messages" } }',
  'setmetatable(run.events, { __len = function() error("__len called") end, '
    .. '__index = function() error("__index called") end })',
  'setmetatable(run.tool_calls, { __len = function() while true do end end })',
  'setmetatable(run, { __index = function() error("x") end })',
  'for k in pairs(run) do run[k] = nil end',
  'local co = coroutine.create(function() coroutine.yield() error("resumed later") end); '
    .. 'coroutine.resume(co); run.co = co',
  'coroutine.wrap(function() run.tool_calls = nil end)()',
  'setmetatable({}, { __gc = function() error("gc ran") end })',
  'local t = setmetatable({}, {}); getmetatable(t).__gc = function() error("gc ran") end; run.t = t',
  'local r = run:leaks("' .. KEY .. '"); r.wire = false; r.findings = nil',
  'run.segments.wire = {}; run._cache = {}',
  'run.file = function() error("file") end',
  'lb.expect(run:called("Read"), "read")',
  'table.sort(run.events, function() error("cmp") end)',
  'for i = 1, #run.events do run.events[i] = setmetatable({}, { __index = function() error("x") end }) end',
  'run.events[1].type = "nope"; run.caps_hit[1] = { file = "forged" }',
  'run.egress[1] = { type = "dns", name = "forged" }',
  'coroutine.yield()',
  'local s = string.rep("x", 1000); run.answer = s',
  'run.answer = ("a"):rep(3000):find(".-.-.-b")',
  'run.stderr:gsub("(.-)(.-)(.-)$", function() error("in gsub") end)',
}

-- How a check ends.
local ENDS = {
  '',
  'error(setmetatable({}, { __tostring = function() while true do end end }))',
  'error(setmetatable({ message = "m" }, { __index = function() error("idx") end }))',
  'error({ check_failed = true, where = setmetatable({}, { __tostring = function() error("t") end }), '
    .. 'message = 42 })',
  'lb.expect(false, "forced")',
  'while true do end',
  'return setmetatable({}, { __gc = function() error("gc") end, __index = function() error("i") end })',
  'error(setmetatable({}, { __tostring = function() return "\\27]0;title\\7" end }))',
}

local function generate(rng)
  local lines = {}
  for _ = 1, rng(1, 5) do
    local move = MOVES[rng(1, #MOVES)]
    lines[#lines + 1] = rng(1, 3) == 1 and move or ("pcall(function() " .. move .. " end)")
  end
  lines[#lines + 1] = ENDS[rng(1, #ENDS)]
  return table.concat(lines, "\n")
end

local VERDICTS = { pass = true, fail = true, error = true }

describe("judge fuzz: hostile checks", function()
  local saved
  setup(function()
    saved = loader.CHECK_BUDGET
    loader.CHECK_BUDGET = { instructions = 5000000, seconds = 5, memory = 64 << 20 }
  end)
  teardown(function()
    loader.CHECK_BUDGET = saved
    os.execute("rm -rf " .. tmp)
  end)

  it(string.format("never change another run's verdict nor stop the suite (seed %d, %d cases)", SEED, N), function()
    local victim = scenario("victim", 'lb.expect(run:called("Read"), "read")\n'
      .. 'lb.expect(run:leaks("' .. KEY .. '").wire, "wire")')
    local plain = scenario("plain", "")
    local want = canon(judge.judge(tmp .. "/victim", victim, nil, FACTS))
    local plain_j = judge.judge(tmp .. "/hostile", plain, nil, FACTS)
    assert.are.equal("pass", cjson.decode(cjson.encode(plain_j)).verdict)
    math.randomseed(SEED)
    local rng = math.random
    for i = 1, N do
      local code = generate(rng)
      local hostile = scenario("h" .. i, code)
      local ok, j = pcall(judge.judge, tmp .. "/hostile", hostile, nil, FACTS)
      assert(ok, string.format("case %d raised: %s\n%s", i, tostring(j), code))
      assert(VERDICTS[j.verdict], string.format("case %d: verdict %s\n%s", i, tostring(j.verdict), code))
      -- what the harness decides is the harness's, whatever the check did
      for _, k in ipairs({ "leaks", "tool_calls", "egress_attempts", "startup", "caps_hit", "usage" }) do
        assert(canon({ plain_j[k] }) == canon({ j[k] }), string.format("case %d changed %s\n%s", i, k, code))
      end
      collectgarbage()
      local got = canon(judge.judge(tmp .. "/victim", victim, nil, FACTS))
      assert(got == want, string.format("case %d changed the victim's verdict\n%s", i, code))
    end
  end)
end)

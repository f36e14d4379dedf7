-- Issue 13, findings 1-3: hostile scenario and subject files. Each fixture
-- in spec/fixtures/hostile/ gives its exact error, with file:line, both
-- through the loader as "leakbench run" uses it (runner's plan and
-- exec-run call loader.load) and through "leakbench list PATH".
local loader = require "leakbench.loader"
local cjson = require "cjson"

local DIR = "spec/fixtures/hostile"

local function load_err(name, kind)
  local t, err = loader.load(DIR .. "/" .. name, kind or "scenario")
  assert.is_nil(t, "loaded: " .. name)
  return err
end

-- "leakbench list PATH": stderr and the exit status.
local function list(name)
  local bin = assert(os.getenv("LEAKBENCH"), "LEAKBENCH is not set")
  local p = assert(io.popen(string.format("%s list %s/%s 2>&1 >/dev/null", bin, DIR, name)))
  local out = p:read("a")
  local _, _, status = p:close()
  return out, status
end

-- Every hostile fixture and the error it must give, through both paths.
local ERRORS = {
  { "patch-string.lua", DIR .. "/patch-string.lua:11: field 'files': path "
    .. "'../../../../tmp/x/PWNED' must be relative and stay inside" },
  { "patch-libs.lua", DIR .. "/patch-libs.lua:14: field 'files': path '../escape' "
    .. "must be relative and stay inside" },
  { "patch-lb.lua", DIR .. "/patch-lb.lua:2: attempt to set 'lb.is': the leakbench module is read-only" },
  -- finding 2: host files and the environment
  { "read-shadow.lua", DIR .. "/read-shadow.lua:2: cannot read file '/etc/shadow': outside the "
    .. "file's directory 'spec/fixtures/hostile'" },
  { "read-up.lua", DIR .. "/read-up.lua:3: cannot read file 'spec/fixtures/hostile/"
    .. "../../../../../../../../../../etc/passwd': it resolves to '/etc/passwd', outside the "
    .. "file's directory 'spec/fixtures/hostile'" },
  { "link-out.lua", DIR .. "/link-out.lua:2: cannot read file 'spec/fixtures/hostile/link-out': "
    .. "it resolves to '/etc/passwd', outside the file's directory 'spec/fixtures/hostile'" },
  { "getenv.lua", DIR .. "/getenv.lua:1: attempt to call a nil value (field 'getenv')" },
  -- finding 3: budgets
  { "loop.lua", DIR .. "/loop.lua:2: loading ran more than 100000000 instructions (instruction budget)" },
  { "loop-pcall.lua", DIR .. "/loop-pcall.lua:4: loading ran more than 100000000 instructions "
    .. "(instruction budget)" },
  { "loop-coroutine.lua", DIR .. "/loop-coroutine.lua:3: loading ran more than 100000000 "
    .. "instructions (instruction budget)" },
  { "memory.lua", DIR .. "/memory.lua:3: loading used more than 256 MiB of memory (memory budget)" },
  { "rep.lua", DIR .. "/rep.lua:1: loading used more than 256 MiB of memory (memory budget)" },
  { "gc.lua", DIR .. "/gc.lua:1: bad argument #2 to 'setmetatable' (a __gc metamethod is not allowed)" },
}

describe("hostile files: exact errors", function()
  for _, case in ipairs(ERRORS) do
    it(case[1] .. " through the loader", function()
      assert.are.equal(case[2], load_err(case[1]))
    end)
    it(case[1] .. " through leakbench list", function()
      local out, status = list(case[1])
      assert.are.equal("leakbench: " .. case[2] .. "\n", out)
      assert.are.equal(1, status)
    end)
  end
end)

describe("hostile files: one file cannot change another, nor the harness", function()
  it("patching string, table, math, cjson and the string metatable stays in the file", function()
    local match, find, sort, concat, encode, min = string.match, string.find, table.sort,
      table.concat, cjson.encode, math.min
    load_err("patch-libs.lua")
    load_err("patch-string.lua")
    assert.are.equal(match, string.match)
    assert.are.equal(find, string.find)
    assert.are.equal(sort, table.sort)
    assert.are.equal(concat, table.concat)
    assert.are.equal(encode, cjson.encode)
    assert.are.equal(min, math.min)
    assert.are.equal("b", ("abc"):match("b"))
    local t = assert(loader.load(DIR .. "/good.lua", "scenario"))
    assert.are.equal("hello a", t.prompt)
    assert.are.same({ "tag" }, t.tags)
    assert.are.equal('{"k":"xy"}', t.files["data.json"])
    -- the harness's own checks still hold after the patches
    local _, err = loader.load(DIR .. "/patch-string.lua", "scenario")
    assert.truthy(err:find("must be relative and stay inside", 1, true))
  end)

  it("nothing was written outside", function()
    assert.is_nil(io.open("/tmp/x/PWNED", "rb"))
  end)
end)

describe("hostile files: lb.file and the host's values", function()
  local tmp
  before_each(function()
    tmp = os.tmpname()
    os.remove(tmp)
    assert(os.execute("mkdir -p " .. tmp))
  end)
  after_each(function() os.execute("rm -rf " .. tmp) end)

  local function write(name, text)
    local f = assert(io.open(tmp .. "/" .. name, "w"))
    f:write(text)
    f:close()
    return tmp .. "/" .. name
  end

  it("reads files and links that stay below the file's directory", function()
    local t = assert(loader.load(DIR .. "/files-ok.lua", "scenario"))
    assert.truthy(t.files.a.data:find("lb.canary", 1, true))
    assert.are.equal(t.files.a.data, t.files.b.data)
    assert.are.equal("none", t.env.REGION)
  end)

  it("refuses a FIFO (without blocking) and a directory", function()
    assert(os.execute("mkfifo " .. tmp .. "/fifo && mkdir " .. tmp .. "/d"))
    local f = write("fifo.lua", "local lb = require 'leakbench'\nreturn { prompt = lb.file('fifo') }\n")
    local _, err = loader.load(f, "scenario")
    assert.are.equal(f .. ":2: cannot read file '" .. tmp .. "/fifo': not a regular file", err)
    f = write("dir.lua", "local lb = require 'leakbench'\nreturn { prompt = lb.file('d') }\n")
    _, err = loader.load(f, "scenario")
    assert.are.equal(f .. ":2: cannot read file '" .. tmp .. "/d': not a regular file", err)
  end)

  it("confines a lib file's lb.file to the lib's own directory", function()
    assert(os.execute("mkdir -p " .. tmp .. "/s/lib"))
    write("secret.txt", "top secret")
    write("s/lib/h.lua", "local lb = require 'leakbench'\nlocal f = lb.file('../../secret.txt')\nreturn f\n")
    local f = write("s/x.lua", "local h = require 'h'\nreturn { prompt = 'p', files = { h = h } }\n")
    local _, err = loader.load(f, "scenario")
    assert.are.equal(tmp .. "/s/x.lua:1: " .. tmp .. "/s/lib/h.lua:2: cannot read file '"
      .. tmp .. "/s/lib/../../secret.txt': "
      .. "it resolves to '" .. tmp .. "/secret.txt', outside the file's directory '" .. tmp .. "/s/lib'", err)
  end)

  it("scenario and subject files, and the scenario file itself, cannot be a FIFO", function()
    assert(os.execute("mkfifo " .. tmp .. "/x.lua"))
    local _, err = loader.load(tmp .. "/x.lua", "scenario")
    assert.are.equal(tmp .. "/x.lua: cannot open: not a regular file", err)
  end)

  it("os has time and date only", function()
    local t = assert(loader.load(write("os.lua", [[
local names = {}
for k in pairs(os) do names[#names + 1] = k end
table.sort(names)
return { prompt = table.concat(names, ",") }
]]), "scenario"))
    assert.are.equal("clock,date,time", t.prompt)
  end)

  it("lb.var reads LEAKBENCH_VAR_<name> and nothing else", function()
    local script = write("var.lua", string.format([[
local loader = require "leakbench.loader"
local t = assert(loader.load(%q, "scenario"))
io.write(t.env.REGION)
]], DIR .. "/files-ok.lua"))
    local bin = assert(os.getenv("LEAKBENCH"))
    local p = assert(io.popen("LEAKBENCH_VAR_REGION=eu-west REGION=no " .. bin .. " lua " .. script))
    assert.are.equal("eu-west", p:read("a"))
    p:close()
    local lb = require "leakbench"
    local ok, err = pcall(lb.var, "A-B")
    assert.is_false(ok)
    assert.truthy(err:find([[lb.var: wrong parameter "name": expected a name of letters, digits and '_', ]]
      .. "got 'A-B'", 1, true), err)
  end)
end)

describe("hostile files: budgets", function()
  local saved_load, saved_check
  before_each(function() saved_load, saved_check = loader.LOAD_BUDGET, loader.CHECK_BUDGET end)
  after_each(function() loader.LOAD_BUDGET, loader.CHECK_BUDGET = saved_load, saved_check end)

  it("bounds wall time too", function()
    loader.LOAD_BUDGET = { instructions = math.maxinteger, seconds = 0.2, memory = 0 }
    assert.are.equal(DIR .. "/loop.lua:2: loading took more than 0.2 s (time budget)", load_err("loop.lua"))
  end)

  it("exec-run gives the load error as the run's error", function()
    local runone = require "leakbench.runone"
    local tmp = os.tmpname()
    os.remove(tmp)
    assert(os.execute("mkdir -p " .. tmp))
    local r = runone.execute({ scenario = DIR .. "/loop.lua", dir = tmp, run_id = "x" })
    os.execute("rm -rf " .. tmp)
    assert.are.equal("error", r.verdict)
    assert.are.equal(DIR .. "/loop.lua:2: loading ran more than 100000000 instructions "
      .. "(instruction budget)", r.reason)
  end)

  it("a check that loops is an error naming the file, and the harness goes on", function()
    local s = assert(loader.load(DIR .. "/check-loop.lua", "scenario"))
    loader.CHECK_BUDGET = { instructions = 10000000, seconds = 10, memory = 64 << 20 }
    local verdict, reason, failed = loader.check(s, {})
    assert.are.equal("error", verdict)
    assert.are.equal(DIR .. "/check-loop.lua:4: check ran more than 10000000 instructions "
      .. "(instruction budget)", reason)
    assert.are.same({}, failed)
    loader.CHECK_BUDGET = { instructions = math.maxinteger, seconds = 0.2, memory = 0 }
    reason = select(2, loader.check(s, {}))
    assert.are.equal(DIR .. "/check-loop.lua:4: check took more than 0.2 s (time budget)", reason)
    -- nothing is left armed: the harness runs unbounded again
    local n = 0
    for i = 1, 20000000 do n = n + i end
    assert.is_true(n > 0)
  end)

  it("check verdicts are unchanged otherwise", function()
    local lb = require "leakbench"
    assert.are.same({ "pass", nil, {}, {} }, { loader.check({ check = function() end }, {}) })
    local verdict, reason, failed = loader.check({ file = "x.lua", check = function()
      lb.expect(false, "nope")
    end }, {})
    assert.are.equal("fail", verdict)
    assert.truthy(reason:match("hostile_spec%.lua:%d+: nope$"), reason)
    assert.are.equal("nope", failed[1].message)
    verdict, reason = loader.check({ file = "x.lua", check = function() error("boom", 0) end }, {})
    assert.are.equal("error", verdict)
    assert.are.equal("check raised: boom", reason)
    reason = select(2, loader.check({ file = "x.lua", check = function()
      error(setmetatable({}, { __tostring = function() while true do end end }))
    end }, {}))
    assert.are.equal("check raised: (error object is a table value)", reason)
  end)
end)

describe("hostile subjects: build contexts stay in the subject's directory", function()
  local S = DIR .. "/subjects"
  local CASES = {
    { "context-root.lua", S .. "/context-root.lua:5: field 'interceptor.build.context' is '/root': "
      .. "it must lie inside the subject's directory '" .. S .. "'" },
    { "context-up.lua", S .. "/context-up.lua:4: field 'interceptor.build.context' is '" .. S
      .. "/../../../../../../../../../..' (resolved: '/'): it must lie inside the subject's directory '"
      .. S .. "'" },
    { "context-link.lua", S .. "/context-link.lua:4: field 'interceptor.build.context' is '" .. S
      .. "/etc-link' (resolved: '/etc'): it must lie inside the subject's directory '" .. S .. "'" },
    { "containerfile-up.lua", S .. "/containerfile-up.lua:4: field 'interceptor.build.containerfile' is '"
      .. S .. "/ctx/../../../../../../../../../../etc/passwd' (resolved: '/etc/passwd'): it must lie "
      .. "inside the subject's directory '" .. S .. "'" },
  }
  for _, case in ipairs(CASES) do
    it(case[1] .. " through the loader and leakbench list", function()
      assert.are.equal(case[2], load_err("subjects/" .. case[1], "subject"))
      local out, status = list("subjects/" .. case[1])
      assert.are.equal("leakbench: " .. case[2] .. "\n", out)
      assert.are.equal(1, status)
    end)
  end

  it("accepts a context inside, and one that does not exist yet", function()
    local t = assert(loader.load(S .. "/context-ok.lua", "subject"))
    assert.are.equal(S .. "/ctx", t.interceptor.build.context)
    assert.truthy(loader.load("spec/fixtures/list/subjects/nohook.lua", "subject"))
  end)
end)

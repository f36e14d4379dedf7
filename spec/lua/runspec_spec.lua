-- A run's options travel once, as its folder's runspec.json: the runner
-- writes it, "leakbench exec-run DIR/runspec.json" reads it with
-- runone.read_spec, and nothing parses them again. A runspec that is
-- missing, not JSON, or has a field of the wrong type is refused with the
-- file and the field named, and exit status 2.
local runone = require "leakbench.runone"
local core = require "leakbench.core"
local cjson = require "cjson"

local GOOD = {
  scenario = "scenarios/a.lua", dir = "/tmp/x", run_id = "r1", suite_id = "s1", repeat_index = 1,
  images = { claude = "c" }, model = "claude-x", timeout = 60, live = false, keep_transcripts = false,
}

local function with(changes)
  local t = {}
  for k, v in pairs(GOOD) do t[k] = v end
  for k, v in pairs(changes) do t[k] = v end
  return t
end

describe("runone.read_spec", function()
  local dir, path
  setup(function()
    dir = assert(core.tmpdir("lb-runspec-"))
    path = dir .. "/runspec.json"
  end)
  teardown(function() core.rmtree(dir) end)

  local function spit(text) assert(core.write_file(path, text)) end

  it("reads every option as the runner wrote it", function()
    spit(cjson.encode(with({ subject = "subjects/b.lua", live = true })))
    local spec = assert(runone.read_spec(path))
    assert.are.same(with({ subject = "subjects/b.lua", live = true }), spec)
  end)

  it("takes a baseline run (no subject) and absent flags", function()
    spit(cjson.encode(with({ live = cjson.null, keep_transcripts = cjson.null })))
    local spec = assert(runone.read_spec(path))
    assert.is_nil(spec.subject)
    assert.is_nil(spec.live)
  end)

  it("names the file and the field of the wrong type", function()
    spit(cjson.encode(with({ timeout = "60" })))
    local spec, err = runone.read_spec(path)
    assert.is_nil(spec)
    assert.are.equal("'" .. path .. "': field 'timeout' is string, expected number", err)
    spit(cjson.encode(with({ run_id = cjson.null })))
    spec, err = runone.read_spec(path)
    assert.is_nil(spec)
    assert.are.equal("'" .. path .. "': field 'run_id' is nil, expected string", err)
  end)

  it("refuses a file that is not a JSON object", function()
    spit("[1,2]")
    local _, err = runone.read_spec(path)
    assert.are.equal("'" .. path .. "' is not a JSON object", err)
    spit("{")
    _, err = runone.read_spec(path)
    assert.are.equal("'" .. path .. "' is not a JSON object", err)
  end)

  it("names a missing file", function()
    local _, err = runone.read_spec(dir .. "/none.json")
    assert.truthy(err:find("^cannot read '" .. dir:gsub("%p", "%%%0") .. "/none%.json': "), err)
  end)
end)

describe("leakbench exec-run", function()
  local function exec_run(args)
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    local real = io.stderr
    _G.io.stderr = f
    local ok, status = pcall(runone.main, {}, args)
    _G.io.stderr = real
    f:close()
    local text = core.read_file(path)
    os.remove(path)
    assert(ok, status)
    return status, text
  end

  it("takes one argument, the runspec", function()
    local status, err = exec_run({})
    assert.are.equal(2, status)
    assert.are.equal("leakbench: exec-run: expected one argument, the run's runspec.json\n", err)
  end)

  it("refuses a bad runspec with exit status 2, naming it", function()
    local status, err = exec_run({ "/nonexistent/runspec.json" })
    assert.are.equal(2, status)
    assert.truthy(err:find("^leakbench: exec%-run: cannot read '/nonexistent/runspec%.json': "), err)
  end)
end)

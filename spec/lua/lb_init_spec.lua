-- lb-init's --gate (src/init/main.c), the real binary (LB_BUILD/lb-init)
-- run here as a plain process: PROGRAM starts only once the gate file
-- exists, whether it is created in its folder, renamed into it, or its
-- folder itself appears later (then inotify has nothing to watch, and the
-- poll sees it); lb-init exits with PROGRAM's status. How soon it starts
-- is bench_run's to measure, not a test's.
local core = require "leakbench.core"

local build = os.getenv("LB_BUILD") or "build/default"

describe("lb-init --gate", function()
  local dir

  before_each(function() dir = assert(core.tmpdir("lb-init-spec-")) end)
  after_each(function() core.rmtree(dir) end)

  -- lb-init waiting for GATE, its program saying so in DIR/out and exiting 7.
  local function start(gate)
    return assert(core.start { argv = { build .. "/lb-init", "--gate", gate, "--", "sh", "-c", "echo started; exit 7" },
      stdout = dir .. "/out", stderr = dir .. "/err" })
  end

  -- The program has not started, a while after lb-init did.
  local function still_waiting(h)
    core.sleep(0.3)
    assert.is_nil(h:wait(0), core.read_file(dir .. "/err"))
    assert.equal("", core.read_file(dir .. "/out") or "")
  end

  local function ends_started(h)
    local r = h:wait(10)
    h:close()
    assert.equal(7, r and r.status, core.read_file(dir .. "/err"))
    assert.equal("started\n", core.read_file(dir .. "/out"))
  end

  it("starts PROGRAM once the gate is created in its folder", function()
    assert(core.mkdir_p(dir .. "/gate", 493))
    local h = start(dir .. "/gate/open")
    still_waiting(h)
    core.write_file(dir .. "/gate/other", "", 420)   -- another entry: not the gate
    still_waiting(h)
    core.write_file(dir .. "/gate/open", "", 420)
    ends_started(h)
  end)

  it("starts PROGRAM once the gate is renamed into its folder", function()
    assert(core.mkdir_p(dir .. "/gate", 493))
    local h = start(dir .. "/gate/open")
    still_waiting(h)
    core.write_file(dir .. "/staged", "", 420)
    assert(os.rename(dir .. "/staged", dir .. "/gate/open"))
    ends_started(h)
  end)

  it("starts PROGRAM once the gate appears in a folder that was not there", function()
    local h = start(dir .. "/later/open")
    still_waiting(h)
    assert(core.mkdir_p(dir .. "/later", 493))
    core.write_file(dir .. "/later/open", "", 420)
    ends_started(h)
  end)
end)

-- The run folder at a neutral path while the run is on (sandbox.lua,
-- Run:hide_dir): the claude container's mount table then names nothing
-- of the host's layout. The folder moves there with a link at its own
-- path, and back when the run ends; a base that is not ours alone is not
-- used; `leakbench clean` moves back the folder of a killed run.
local sandbox = require "leakbench.sandbox"
local clean = require "leakbench.clean"
local core = require "leakbench.core"

describe("the run folder's neutral place", function()
  local top, saved

  before_each(function()
    top = assert(core.tmpdir("lb-hide"))
    saved = sandbox.HIDE_BASE
    sandbox.HIDE_BASE = top .. "/base"
  end)

  after_each(function()
    sandbox.HIDE_BASE = saved
    core.rmtree(top)
  end)

  local function new_run(dir)
    assert(core.mkdir_p(dir, 493))
    assert(core.write_file(dir .. "/secrets.json", "{}", 384))
    return sandbox.new({ dir = dir, run_id = "0123456789ab-run" })
  end

  it("moves there for the run, a link at its own path, and back", function()
    local shown = top .. "/out/s/baseline/1"
    local r = new_run(shown)
    r:hide_dir()
    local base = sandbox.hide_base()
    assert.are.equal(("%s/%d-0123456789ab-run"):format(base, core.getpid()), r.dir)
    local st = core.stat(base)
    assert.are.equal(0, st.mode & 63)
    assert.are.equal("link", core.stat(shown).type)
    assert.are.equal("dir", core.stat(r.dir).type)
    assert.are.equal(shown, core.read_file(r.dir .. ".from"))
    -- what is written through its own path lands there
    assert(core.write_file(shown .. "/stream.jsonl", "x\n", 420))
    assert.are.equal("x\n", core.read_file(r.dir .. "/stream.jsonl"))
    r:unhide_dir()
    assert.are.equal(shown, r.dir)
    assert.are.equal("dir", core.stat(shown).type)
    assert.are.equal("x\n", core.read_file(shown .. "/stream.jsonl"))
    assert.are.equal("{}", core.read_file(shown .. "/secrets.json"))
    assert.are.same({}, core.listdir(base))
  end)

  it("stays where it is when the base is not ours alone", function()
    local shown = top .. "/out2/1"
    local r = new_run(shown)
    assert(core.mkdir_p(sandbox.hide_base(), 493))
    assert(core.chmod(sandbox.hide_base(), 493))
    r:hide_dir()
    assert.are.equal(shown, r.dir)
    assert.are.equal("dir", core.stat(shown).type)
    assert.are.same({}, core.listdir(sandbox.hide_base()))
  end)

  it("comes back with leakbench clean when its run was killed", function()
    local base = sandbox.hide_base()
    assert(core.mkdir_p(base, 448))
    local shown = top .. "/out3/1"
    assert(core.mkdir_p(top .. "/out3", 493))
    -- a run of a process that is gone (no pid is above 2^22)
    local hidden = base .. "/4194999-deadrun"
    assert(core.mkdir_p(hidden, 493))
    assert(core.write_file(hidden .. "/stream.jsonl", "kept\n", 420))
    assert(core.write_file(hidden .. ".from", shown, 384))
    assert(core.symlink(hidden, shown))
    -- its transcript still append-only (a killed run's watcher never closed)
    assert(core.mkdir_p(hidden .. "/claude-config/projects/-work", 493))
    local tr = hidden .. "/claude-config/projects/-work/s.jsonl"
    assert(core.write_file(tr, "t\n", 384))
    local fh = assert(core.open_beneath(hidden, "claude-config/projects/-work/s.jsonl"))
    local locked = fh:append_only(true)
    fh:close()
    -- a killed run whose run folder the user removed (the link with it)
    local gone = base .. "/4194998-gonerun"
    assert(core.mkdir_p(gone .. "/claude-config/projects/-work", 493))
    assert(core.write_file(gone .. "/claude-config/projects/-work/s.jsonl", "t\n", 384))
    fh = assert(core.open_beneath(gone, "claude-config/projects/-work/s.jsonl"))
    fh:append_only(true)
    fh:close()
    assert(core.write_file(gone .. ".from", top .. "/removed/1", 384))
    -- and one of this live process, which stays
    local live = ("%s/%d-liverun"):format(base, core.getpid())
    assert(core.mkdir_p(live, 493))
    assert(core.write_file(live .. ".from", top .. "/elsewhere", 384))
    local said = {}
    assert.are.equal(2, clean.sweep_hidden(function(l) said[#said + 1] = l end))
    assert.are.equal("dir", core.stat(shown).type)
    assert.are.equal("kept\n", core.read_file(shown .. "/stream.jsonl"))
    assert.are.same({
      "removed the folder of a killed run, " .. gone .. " (its run folder " .. top .. "/removed/1 is gone)",
      "moved run folder " .. shown .. " back (process 4194999 is gone)",
    }, said)
    if locked then   -- (root) the attribute was cleared: the user can remove the transcript
      assert.truthy(os.remove(shown .. "/claude-config/projects/-work/s.jsonl"))
    end
    assert.are.same({ ("%d-liverun"):format(core.getpid()), ("%d-liverun.from"):format(core.getpid()) },
      core.listdir(base))
  end)
end)

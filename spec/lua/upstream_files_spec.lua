-- What the harness reads from the folders the upstream's processes write
-- (records/, upstream-logs/: bound read-write into the upstream
-- container) is hostile input, as evidence is: a compromised lb-model or
-- lb-proxy may plant a link there to any host file, or a FIFO. The harness
-- (root, in rootful mode) must never copy a host file into the run's
-- artifacts or its error, nor wait on a FIFO. Sandbox:check_caps and
-- Sandbox:collect_upstream_logs, the two readers, under every such plant.
local sandbox = require "leakbench.sandbox"
local core = require "leakbench.core"

local HOST_SECRET = "HOST-ONLY-3f9c1a"

describe("the files the upstream writes", function()
  local top, host_file

  before_each(function()
    top = assert(core.tmpdir("lb-upfiles"))
    host_file = top .. "/host-file"
    assert(core.write_file(host_file, HOST_SECRET .. "\n", 384))
  end)

  after_each(function() core.rmtree(top) end)

  local function new_run()
    local dir = top .. "/run"
    assert(core.mkdir_p(dir .. "/records", 493))
    assert(core.mkdir_p(dir .. "/upstream-logs", 493))
    local r = sandbox.new({ dir = dir, run_id = "0123456789ab-run" })
    r.records = r.dir .. "/records"
    r.uplogs = r.dir .. "/upstream-logs"
    return r
  end

  -- Each plant, made at PATH: a link to the host file, a link to its
  -- folder, a link through a linked folder.
  local PLANTS = {
    ["a link to a host file"] = function(path) assert(core.symlink(host_file, path)) end,
    ["a relative link out"] = function(path)
      assert(core.symlink("../../host-file", path))
    end,
    ["a link to a host folder"] = function(path) assert(core.symlink(top, path)) end,
  }

  for what, plant in pairs(PLANTS) do
    it("caps.json as " .. what .. " brings nothing of the host into the run's error", function()
      local r = new_run()
      plant(r.records .. "/caps.json")
      local ok, err = pcall(r.check_caps, r)
      local msg = type(err) == "table" and err.msg or tostring(err)
      assert.is_falsy((not ok and msg or ""):find(HOST_SECRET, 1, true), msg)
    end)

    it("model.log as " .. what .. " brings nothing of the host into the run's folder", function()
      local r = new_run()
      plant(r.uplogs .. "/model.log")
      r:collect_upstream_logs()
      local copied = core.read_file(r.dir .. "/model.log") or ""
      assert.is_falsy(copied:find(HOST_SECRET, 1, true))
      assert.is_nil(core.stat(r.uplogs))
    end)
  end

  it("still copies a model.log that is a file, and reads a caps.json that is one", function()
    local r = new_run()
    assert(core.write_file(r.uplogs .. "/model.log", "served 3 turns\n", 420))
    r:collect_upstream_logs()
    assert.are.equal("served 3 turns\n", core.read_file(r.dir .. "/model.log"))
    assert(core.write_file(r.records .. "/caps.json", '{"records":{"message":"at 5000"}}', 420))
    local ok, err = pcall(r.check_caps, r)
    assert.is_false(ok)
    assert.are.equal("the recording proxy hit its cap 'records' (at 5000)", err.msg)
  end)
end)

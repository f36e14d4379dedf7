-- How many runs a suite starts at once without --jobs (runner.default_jobs).
local runner = require "leakbench.runner"
local core = require "leakbench.core"

local function meminfo(mib)
  return ("MemTotal:       99999999 kB\nMemFree:         1000 kB\nMemAvailable:   %d kB\n"):format(mib * 1024)
end

describe("the default --jobs", function()
  it("is one run per core, as many as the available memory leaves 256 MiB each", function()
    assert.equal(2, runner.default_jobs(2, meminfo(24 * 1024)))
    assert.equal(2, runner.default_jobs(2, meminfo(600)))
    assert.equal(1, runner.default_jobs(2, meminfo(300)))
    assert.equal(3, runner.default_jobs(4, meminfo(3 * 256)))
    assert.equal(16, runner.default_jobs(64, meminfo(4096)))
    assert.equal(64, runner.default_jobs(64, meminfo(1024 * 1024)))
  end)

  it("is at least one", function()
    assert.equal(1, runner.default_jobs(1, meminfo(100)))
    assert.equal(1, runner.default_jobs(8, meminfo(0)))
  end)

  it("is one per core when the memory cannot be read", function()
    assert.equal(3, runner.default_jobs(3, ""))
    assert.equal(3, runner.default_jobs(3, "MemAvailable: lots\n"))
  end)

  it("reads this machine's cores and memory by default", function()
    local n = runner.default_jobs()
    assert.is_true(n >= 1 and n <= core.ncpu(), tostring(n))
  end)
end)

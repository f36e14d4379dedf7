-- core.lock: one holder at a time among processes (the rootless podman
-- service's creates, podman.lua), released however the holder ends, and
-- never taken through a link or on anything but a regular file.
local core = require "leakbench.core"

describe("core.lock", function()
  local top
  before_each(function() top = assert(core.tmpdir("lb-lock")) end)
  after_each(function() core.rmtree(top) end)

  -- A process that takes the lock at PATH, writes "got" to OUT, holds it
  -- HOLD seconds (or until killed) and ends.
  local function taker(path, out, hold)
    local script = top .. "/taker.lua"
    assert(core.write_file(script, ([[
local core = require "leakbench.core"
local l = assert(core.lock(%q))
assert(core.write_file(%q, "got", 420))
core.sleep(%s)
]]):format(path, out, hold), 420))
    return assert(core.start { argv = { assert(core.exe_path()), "lua", script },
                               stdout = "/dev/null", stderr = top .. "/taker.err" })
  end

  local function wait_for(path, secs)
    local deadline = core.now() + secs
    while not core.stat(path) and core.now() < deadline do core.sleep(0.01) end
    return core.stat(path) ~= nil
  end

  it("makes another process wait until it is released", function()
    local path = top .. "/l"
    local l = assert(core.lock(path))
    local h = taker(path, top .. "/got", 0)
    -- the taker starts, opens the file and waits: 0.5 s is long enough
    -- for it to get there, and it must not get the lock meanwhile
    core.sleep(0.5)
    assert.is_nil(core.stat(top .. "/got"), core.read_file(top .. "/taker.err"))
    l:unlock()
    assert.is_true(wait_for(top .. "/got", 30), core.read_file(top .. "/taker.err"))
    assert.are.equal(0, h:wait(30).status)
    l:unlock()   -- harmless twice
  end)

  it("is released when its holder is killed", function()
    local path = top .. "/l"
    local h = taker(path, top .. "/got", 600)
    assert.is_true(wait_for(top .. "/got", 30), core.read_file(top .. "/taker.err"))
    h:kill("SIGKILL")
    h:wait(30)
    do
      local _ <close> = assert(core.lock(path))
    end
    assert.is_not_nil(core.lock(path))
  end)

  it("is released by a <close> variable going out of scope", function()
    local path = top .. "/l"
    do
      local _ <close> = assert(core.lock(path))
    end
    local h = taker(path, top .. "/got", 0)
    assert.is_true(wait_for(top .. "/got", 30), core.read_file(top .. "/taker.err"))
    h:wait(30)
  end)

  it("refuses a link, a folder and a FIFO at its path, at once", function()
    assert(core.write_file(top .. "/target", "x", 420))
    assert(core.symlink(top .. "/target", top .. "/link"))
    assert(core.mkdir_p(top .. "/dir", 493))
    assert(core.run { argv = { "mkfifo", top .. "/fifo" } })
    for _, name in ipairs { "link", "dir", "fifo" } do
      local l, err = core.lock(top .. "/" .. name)
      assert.is_nil(l, name)
      assert.matches("/" .. name, err)
    end
    assert.are.equal("x", core.read_file(top .. "/target"))
  end)
end)

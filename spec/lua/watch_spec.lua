-- The transcript watcher (watch.lua): appends are kept quietly; a
-- rewrite, a truncation, a replacement or a deletion of what Claude Code
-- wrote is a change, and the version before it is kept.
local watch = require "leakbench.watch"
local core = require "leakbench.core"

local SID = "0b7e4a52-9c1d-4e8f-a3b2-1c0d9e8f7a6b"

describe("watch", function()
  local dir, path, w

  local function spit(p, text, mode)
    local f = assert(io.open(p, mode or "wb"))
    f:write(text)
    f:close()
  end

  before_each(function()
    -- the detection, as without the right to make a file append-only
    -- (rootless); the attribute has a case of its own below
    watch.LOCK = false
    dir = os.tmpname()
    os.remove(dir)
    assert(core.mkdir_p(dir .. "/claude-config/projects/-work", 493))
    path = dir .. "/claude-config/projects/-work/" .. SID .. ".jsonl"
    w = watch.new(dir, SID)
  end)
  after_each(function()
    w:close()
    watch.LOCK = true
    core.rmtree(dir)
  end)

  local function versions()
    local out = {}
    for _, rel in ipairs(core.files_beneath(dir, "transcript-versions") or {}) do
      out[#out + 1] = core.read_file(dir .. "/transcript-versions/" .. rel)
    end
    return out
  end

  it("keeps appends without a word", function()
    w:poll()
    spit(path, "a\n")
    w:poll()
    spit(path, "a\nb\n")
    w:poll()
    assert.are.same({}, w.changes)
    assert.are.same({}, versions())
  end)

  it("names a rewrite in place, a truncation, a replacement and a deletion, keeping each version", function()
    spit(path, "line one SECRET\n")
    w:poll()
    local f = assert(io.open(path, "r+b"))   -- same inode, same size
    f:write("line one XXXXXX")
    f:close()
    w.files[w.main].mtime = -1   -- the same size: only the mtime tells
    w:poll()
    spit(path, "li")             -- same inode, shorter
    w:poll()
    spit(path .. ".new", "new\n")  -- another inode, renamed over it (sed -i)
    os.rename(path .. ".new", path)
    w:poll()
    os.remove(path)
    w:poll()
    local how = {}
    for _, c in ipairs(w.changes) do how[#how + 1] = c.how end
    assert.are.same({ "rewritten", "truncated", "replaced", "deleted" }, how)
    assert.are.same({ "line one SECRET\n", "line one XXXXXX\n", "li", "new\n" }, versions())
  end)

  it("keeps what Claude Code appended after its last look, when another file is renamed over it", function()
    spit(path, "line one\n")
    w:poll()
    -- between two looks: Claude Code appends the secret, the agent renames
    -- a copy without it over the file
    spit(path, "line two SECRET\n", "ab")
    spit(path .. ".new", "line one\n")
    os.rename(path .. ".new", path)
    w:poll()
    assert.are.equal(1, #w.changes)
    assert.are.equal("replaced", w.changes[1].how)
    assert.are.same({ "line one\nline two SECRET\n" }, versions())
    -- and what comes after is followed in the new file
    spit(path, "more\n", "ab")
    w:poll()
    assert.are.equal(1, #w.changes)
    w:close()
  end)

  it("keeps what a deleted file held last, and names any other file in its place", function()
    spit(path, "a\n")
    w:poll()
    spit(path, "b SECRET\n", "ab")
    os.remove(path)
    w:poll()
    spit(path, "a\nb SECRET\n")   -- the same text, another file
    w:poll()
    spit(path .. ".new", "a\nb SECRET\nc\n")
    os.rename(path .. ".new", path)
    w:poll()
    local how = {}
    for _, c in ipairs(w.changes) do how[#how + 1] = c.how end
    assert.are.same({ "deleted", "replaced" }, how)
    assert.are.same({ "a\nb SECRET\n", "a\nb SECRET\n" }, versions())
  end)

  it("is woken by a write in the transcript folder, and waits its time out without one", function()
    spit(path, "a\n")
    w:poll()
    assert.is_true(w:wait(0))
    local t0 = core.now()
    assert.is_true(w:wait(0.05))
    assert.truthy(core.now() - t0 >= 0.04)
    spit(path, "b\n", "ab")
    t0 = core.now()
    assert.is_true(w:wait(5))
    assert.truthy(core.now() - t0 < 1, "the write did not wake the watcher")
    w:close()
  end)

  it("is woken by the making of the transcript's folders, so it sees the transcript the moment it is there", function()
    -- Claude Code makes projects/-work/ at its start, after the watcher
    -- began: until the transcript folder exists, what exists of the way
    -- to it is watched, and its making wakes the wait (not the carriers'
    -- next check: the agent's first tool may run before it)
    core.rmtree(dir .. "/claude-config/projects")
    local h = assert(core.start { argv = { "sh", "-c", "sleep 0.2; mkdir -p \"$1\"; sleep 0.2; printf 'a\\n' > \"$2\"",
      "sh", dir .. "/claude-config/projects/-work", path } })
    local sleeper = assert(core.start { argv = { "sleep", "30" } })
    local pidfd <close> = assert(core.pidfd(sleeper:pid()))
    local t0, wakes = core.now(), 0
    repeat
      -- each wait would last 20 s if nothing woke it
      w:wait(20, pidfd)
      w:poll()
      wakes = wakes + 1
    until w.files[w.main] or wakes == 10
    local took = core.now() - t0
    sleeper:kill("SIGKILL")
    sleeper:wait()
    assert.equal(0, h:wait().status)
    assert.truthy(w.files[w.main], "the transcript was not seen")
    assert.truthy(took < 10, ("the making of the folders did not wake the wait (%.1f s)"):format(took))
    -- a folder renamed away and made again is watched again
    assert(os.rename(dir .. "/claude-config/projects/-work", dir .. "/claude-config/projects/old"))
    assert(core.mkdir_p(dir .. "/claude-config/projects/-work", 493))
    w:wait(0)
    w:poll()
    sleeper = assert(core.start { argv = { "sleep", "30" } })
    local pidfd2 <close> = assert(core.pidfd(sleeper:pid()))
    h = assert(core.start { argv = { "sh", "-c", "sleep 0.2; printf 'b\\n' > \"$1\"", "sh", path } })
    t0 = core.now()
    w:wait(20, pidfd2)
    took = core.now() - t0
    sleeper:kill("SIGKILL")
    sleeper:wait()
    h:wait()
    assert.truthy(took < 10, ("a write in the folder made again did not wake the wait (%.1f s)"):format(took))
  end)

  it("sees a subagent's transcript at the wake its making causes, not at the next timed walk", function()
    local sub = dir .. "/claude-config/projects/-work/" .. SID .. "/subagents"
    assert(core.mkdir_p(sub, 493))
    spit(path, "a\n")
    w:poll()
    assert.is_true(w:wait(0))   -- the folders are watched from here
    w:poll()
    spit(sub .. "/agent-1.jsonl", "b SECRET\n")
    assert.is_true(w:wait(5))
    w:poll()   -- well within the half second between timed walks
    local rel = "claude-config/projects/-work/" .. SID .. "/subagents/agent-1.jsonl"
    assert.truthy(w.files[rel], "the subagent's transcript was not seen")
    assert.are.equal("b SECRET\n", w.files[rel].text)
  end)

  it("makes each transcript append-only where it may, and clears it when it closes", function()
    watch.LOCK = true
    spit(path, "a SECRET\n")
    w:poll()
    if not w.files[w.main].locked then
      -- not root, or a file system without the attribute: the detection holds there
      assert.is_nil(w.locked)
      return
    end
    spit(path, "b\n", "ab")            -- Claude Code's appends go on
    assert.is_nil(io.open(path, "wb"))  -- a rewrite in place, a truncation
    assert.is_nil(io.open(path, "r+b"))
    spit(path .. ".new", "clean\n")
    assert.is_nil(os.rename(path .. ".new", path))  -- sed -i
    assert.is_nil(os.rename(path, path .. ".moved"))
    assert.is_nil(os.remove(path))
    w:poll()
    assert.are.same({}, w.changes)
    assert.are.equal("a SECRET\nb\n", core.read_file(path))
    w:close()
    assert.truthy(os.remove(path), "the attribute was not cleared")
  end)

  it("names a transcript replaced by a link, and never follows it", function()
    spit(path, "x\n")
    w:poll()
    os.remove(path)
    assert(os.execute("ln -s /etc/passwd " .. path))
    w:poll()
    assert.are.equal("replaced by a link", w.changes[1].how)
  end)
  it("wakes at the end of a process it follows (core.pidfd), and says it ended", function()
    local h = assert(core.start { argv = { "true" } })
    local pidfd <close> = assert(core.pidfd(h:pid()))
    -- the child ends (maybe before it is followed: not reaped, it is
    -- still there); the wait does not end by its timeout (60 s), and a
    -- timeout would not say "ended"
    local waited, ended = w:wait(60, pidfd)
    assert.is_true(waited)
    assert.is_true(ended)
    assert.equal(0, h:wait().status)
    -- an append wakes it too, the process not ended
    local h2 = assert(core.start { argv = { "sleep", "30" } })
    local pidfd2 <close> = assert(core.pidfd(h2:pid()))
    spit(path, "{}\n", "ab")
    waited, ended = w:wait(60, pidfd2)
    assert.is_true(waited)
    assert.is_false(ended)
    h2:kill("SIGKILL")
    h2:wait()
    -- misuse: not a process id, a closed descriptor
    assert.has_error(function() core.pidfd("1") end)
    assert.has_error(function() core.pidfd(0) end)
    pidfd2:close()
    assert.has_error(function() w:wait(0, pidfd2) end)
  end)
end)

-- core.run / core.start / core.wait_any and the file helpers of
-- "leakbench.core": results, the two error channels (misuse raises with
-- the parameter's path and the caller's line; the environment returns
-- nil, message), interrupts, and handles that close twice harmlessly.
local core = require "leakbench.core"

-- The message a call raised, and the "file:line: " prefix it must carry:
-- f is called on the line that calls raised().
local function raised(f)
  local line = debug.getinfo(2, "l").currentline
  local src = debug.getinfo(2, "S").short_src
  local ok, err = pcall(f)
  assert.is_false(ok, "expected an error")
  return err, ("%s:%d: "):format(src, line)
end

describe("core.run", function()
  it("reports the exit status and captures both streams", function()
    local r = core.run { argv = { "sh", "-c", "echo out; echo err >&2; exit 3" } }
    assert.equal(3, r.status)
    assert.is_nil(r.signal)
    assert.equal("out\n", r.stdout)
    assert.equal("err\n", r.stderr)
    assert.is_false(r.timed_out)
    assert.is_false(r.interrupted)
    assert.is_false(r.truncated)
    assert.is_true(r.elapsed >= 0 and r.elapsed < 5)
  end)

  it("reports a signal by number and name", function()
    local r = core.run { argv = { "sh", "-c", "kill -KILL $$" } }
    assert.is_nil(r.status)
    assert.equal(9, r.signal)
    assert.equal("SIGKILL", r.signame)
  end)

  it("passes stdin bytes, env additions and cwd", function()
    local r = core.run { argv = { "sh", "-c", "pwd; echo \"$LB_A\"; cat" },
      stdin = "in\0put", env = { LB_A = "a b" }, cwd = "/tmp" }
    assert.equal("/tmp\na b\nin\0put", r.stdout)
  end)

  it("kills at the deadline and says so", function()
    local t0 = core.now()
    local r = core.run { argv = { "sleep", "30" }, timeout = 0.2 }
    assert.is_true(r.timed_out)
    assert.equal("SIGTERM", r.signame)
    assert.is_true(core.now() - t0 < 5)
  end)

  it("caps captured output and flags it", function()
    local r = core.run { argv = { "head", "-c", "100000", "/dev/zero" }, max_output = 10 }
    assert.equal(10, #r.stdout)
    assert.is_true(r.truncated)
  end)

  it("writes to files when asked", function()
    local dir = assert(core.tmpdir("lb-spec-"))
    local r = core.run { argv = { "sh", "-c", "echo o; echo e >&2" },
      stdout = dir .. "/o", stderr = dir .. "/e" }
    assert.equal("", r.stdout)
    assert.equal("o\n", core.read_file(dir .. "/o"))
    assert.equal("e\n", core.read_file(dir .. "/e"))
    assert.is_true(core.rmtree(dir))
  end)

  it("returns nil and a message when the program cannot run", function()
    local r, err = core.run { argv = { "leakbench-no-such-program" } }
    assert.is_nil(r)
    assert.equal("cannot run 'leakbench-no-such-program': no such file or directory", err)
    r, err = core.run { argv = { "true" }, cwd = "/nonexistent-lb" }
    assert.is_nil(r)
    assert.equal("cannot change directory to '/nonexistent-lb': no such file or directory", err)
  end)

  -- Each case: the call, and the message it must raise.
  local misuse = {
    { function() core.run() end, 'core.run: wrong parameter "opts": expected table, got no value' },
    { function() core.run("ls") end, 'core.run: wrong parameter "opts": expected table, got string' },
    { function() core.run {} end, 'core.run: wrong parameter "opts.argv": expected a list of strings, got nil' },
    { function() core.run { argv = {} } end,
      'core.run: wrong parameter "opts.argv": expected a list of strings, got an empty table' },
    { function() core.run { argv = "ls" } end,
      'core.run: wrong parameter "opts.argv": expected a list of strings, got string' },
    { function() core.run { argv = { "a", 2 } } end,
      'core.run: wrong parameter "opts.argv[2]": expected string, got number' },
    { function() core.run { argv = { "a\0b" } } end, 'core.run: wrong parameter "opts.argv[1]": contains a NUL byte' },
    { function() core.run { argv = { "true" }, argz = 1 } end, 'core.run: wrong parameter "opts.argz": not an option' },
    { function() core.run { argv = { "true" }, [1] = "x" } end,
      'core.run: wrong parameter "opts": expected option names, got a number key' },
    { function() core.run { argv = { "true" }, stdin = 5 } end,
      'core.run: wrong parameter "opts.stdin": expected string, got number' },
    { function() core.run { argv = { "true" }, env = "A=1" } end,
      'core.run: wrong parameter "opts.env": expected table, got string' },
    { function() core.run { argv = { "true" }, env = { A = 1 } } end,
      'core.run: wrong parameter "opts.env.A": expected string, got number' },
    { function() core.run { argv = { "true" }, env = { "x" } } end,
      'core.run: wrong parameter "opts.env": expected variable names, got a number key' },
    { function() core.run { argv = { "true" }, env = { ["A=B"] = "x" } } end,
      "core.run: wrong parameter \"opts.env\": expected variable names, got the key 'A=B'" },
    { function() core.run { argv = { "true" }, cwd = 1 } end,
      'core.run: wrong parameter "opts.cwd": expected string, got number' },
    { function() core.run { argv = { "true" }, stdout = true } end,
      'core.run: wrong parameter "opts.stdout": expected string, got boolean' },
    { function() core.run { argv = { "true" }, timeout = "5" } end,
      'core.run: wrong parameter "opts.timeout": expected a number of seconds, got string' },
    { function() core.run { argv = { "true" }, timeout = 0 } end,
      'core.run: wrong parameter "opts.timeout": expected a positive number of seconds, got 0' },
    { function() core.run { argv = { "true" }, timeout = -1.5 } end,
      'core.run: wrong parameter "opts.timeout": expected a positive number of seconds, got -1.5' },
    { function() core.run { argv = { "true" }, max_output = 1.5 } end,
      'core.run: wrong parameter "opts.max_output": expected an integer number of bytes, got number' },
    { function() core.run { argv = { "true" }, uninterruptible = 1 } end,
      'core.run: wrong parameter "opts.uninterruptible": expected boolean, got number' },
    { function() core.start { argv = { 1 } } end,
      'core.start: wrong parameter "opts.argv[1]": expected string, got number' },
    { function() core.wait_any({}) end,
      'core.wait_any: wrong parameter "list": expected a list of processes, got an empty table' },
    { function() core.wait_any({ 1 }) end, 'core.wait_any: wrong parameter "list[1]": expected a process, got number' },
    { function() core.wait_any("x") end,
      'core.wait_any: wrong parameter "list": expected a list of processes, got string' },
    { function() core.sleep("1") end,
      'core.sleep: wrong parameter "seconds": expected a number of seconds, got string' },
    { function() core.tmpdir("a/b") end, "core.tmpdir: wrong parameter \"prefix\": contains a '/'" },
    { function() core.rmtree("/") end, "core.rmtree: wrong parameter \"path\": refusing to remove '/'" },
    { function() core.rmtree(nil) end, 'core.rmtree: wrong parameter "path": expected string, got nil' },
    { function() core.write_file("/tmp/x", 5) end,
      'core.write_file: wrong parameter "bytes": expected string, got number' },
    { function() core.chown("/tmp/x", "0", 0) end, 'core.chown: wrong parameter "uid": expected integer, got string' },
    { function() core.getrlimit("cpu") end, "core.getrlimit: wrong parameter \"name\": unknown limit 'cpu'" },
  }
  for i, case in ipairs(misuse) do
    it("raises on misuse with the caller's line: " .. case[2], function()
      local line = debug.getinfo(case[1], "S").linedefined
      local src = debug.getinfo(case[1], "S").short_src
      local ok, err = pcall(case[1])
      assert.is_false(ok, "case " .. i)
      assert.equal(("%s:%d: %s"):format(src, line, case[2]), err)
    end)
  end
end)

describe("core.start", function()
  it("waits with a timeout, then for the result", function()
    local h = assert(core.start { argv = { "sleep", "0.3" } })
    assert.is_true(h:pid() > 0)
    local r, err = h:wait(0.01)
    assert.is_nil(r)
    assert.equal("timeout", err)
    assert.is_false(h:done())
    r = h:wait()
    assert.equal(0, r.status)
    assert.is_true(h:done())
    assert.equal(0, h:wait(0).status)     -- again: the same result
    r, err = h:kill()
    assert.is_nil(r)
    assert.equal("the process has finished", err)
    h:close()
    h:close()                              -- harmless twice
    local msg, where = raised(function() h:wait() end)
    assert.equal(where .. 'process:wait: wrong parameter "self": the process is closed', msg)
  end)

  it("kills by signal name", function()
    local h = assert(core.start { argv = { "sleep", "30" } })
    assert.is_true(h:kill("SIGKILL"))
    assert.equal("SIGKILL", h:wait(5).signame)
    h:close()
    local msg, where = raised(function() h:kill("SIGNOPE") end)
    assert.equal(where .. 'process:kill: wrong parameter "self": the process is closed', msg)
  end)

  it("closes (kills and reaps) at the end of a <close> scope", function()
    local pid
    do
      local h <close> = assert(core.start { argv = { "sleep", "30" } })
      pid = h:pid()
      assert.is_true(core.pid_alive(pid))
    end
    assert.is_false(core.pid_alive(pid))
  end)

  it("returns nil and a message when the program cannot run", function()
    local h, err = core.start { argv = { "leakbench-no-such-program" } }
    assert.is_nil(h)
    assert.equal("cannot run 'leakbench-no-such-program': no such file or directory", err)
  end)
end)

describe("core.wait_any", function()
  it("returns the index of the first to finish, and its result", function()
    local a = assert(core.start { argv = { "sleep", "5" } })
    local b = assert(core.start { argv = { "sh", "-c", "sleep 0.1; exit 7" } })
    local i, r = core.wait_any({ a, b }, 0.01)
    assert.is_nil(i)
    assert.equal("timeout", r)
    i, r = core.wait_any({ a, b }, 5)
    assert.equal(2, i)
    assert.equal(7, r.status)
    a:close()
    b:close()
    local msg, where = raised(function() core.wait_any({ a }) end)
    assert.equal(where .. 'core.wait_any: wrong parameter "list[1]": the process is closed', msg)
  end)
end)

describe("interrupts", function()
  it("cut interruptible waits short and spare uninterruptible ones", function()
    assert.is_true(core.trap_signals())
    assert.is_nil(core.interrupted())
    local victim = assert(core.start { argv = { "sleep", "30" } })
    -- Send ourselves SIGINT, as ^C would.
    assert.equal(0, core.run { argv = { "kill", "-INT", tostring(core.getpid()) },
      uninterruptible = true }.status)
    assert.equal("SIGINT", core.interrupted())
    local t0 = core.now()
    assert.is_false(core.sleep(10))
    local i, err = core.wait_any({ victim }, 10)
    assert.is_nil(i)
    assert.equal("interrupted", err)
    local r = victim:wait()
    assert.is_true(r.interrupted)
    assert.is_false(r.timed_out)
    r = core.run { argv = { "sleep", "0.2" } }
    assert.is_true(r.interrupted)
    r = core.run { argv = { "sh", "-c", "sleep 0.2; echo done" }, uninterruptible = true }
    assert.is_false(r.interrupted)
    assert.equal("done\n", r.stdout)
    assert.is_true(core.now() - t0 < 8)
    victim:close()
    core.clear_interrupt()
    assert.is_nil(core.interrupted())
    assert.is_true(core.sleep(0.01))
  end)
end)

describe("file helpers", function()
  local dir
  before_each(function() dir = assert(core.tmpdir("lb-spec-")) end)
  after_each(function() assert.is_true(core.rmtree(dir)) end)

  it("make a private temp dir", function()
    local st = core.stat(dir)
    assert.equal("dir", st.type)
    assert.equal(tonumber("700", 8), st.mode)
    assert.matches("/lb%-spec%-[%w]+$", dir)
    local d2 = assert(core.tmpdir("x-", dir))
    assert.equal(dir .. "/x-", d2:sub(1, #dir + 3))
  end)

  it("write, read, stat, list, hash", function()
    assert.is_true(core.mkdir_p(dir .. "/a/b"))
    assert.is_true(core.write_file(dir .. "/a/b/f", "abc", tonumber("600", 8)))
    local st = core.stat(dir .. "/a/b/f")
    assert.same({ "file", 3, tonumber("600", 8) }, { st.type, st.size, st.mode })
    assert.equal("abc", core.read_file(dir .. "/a/b/f"))
    assert.same({ "b" }, core.listdir(dir .. "/a"))
    assert.equal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
      core.sha256("abc"))
    assert.equal(core.sha256("abc"), core.sha256_file(dir .. "/a/b/f"))
    local ok, err = core.write_file(dir .. "/a/b/f", "x", nil, true)
    assert.is_nil(ok)
    assert.equal("cannot create '" .. dir .. "/a/b/f': File exists", err)
    local none, e2 = core.read_file(dir .. "/none")
    assert.is_nil(none)
    assert.equal("cannot read '" .. dir .. "/none': No such file or directory", e2)
    assert.is_nil(core.stat(dir .. "/none"))
    assert.is_true(core.chmod(dir .. "/a/b/f", tonumber("644", 8)))
    assert.equal(tonumber("644", 8), core.stat(dir .. "/a/b/f").mode)
  end)

  it("chown a tree (as root)", function()
    if core.getuid() ~= 0 then return end
    assert.is_true(core.mkdir_p(dir .. "/p/q"))
    assert.is_true(core.chown(dir .. "/p", 1000, 1000, true))
    assert.equal(1000, core.stat(dir .. "/p/q").uid)
  end)

  it("take optional counts as non-negative integers, by one check (l_opt_count)", function()
    local function err(f, ...)
      local ok, e = pcall(f, ...)
      assert.is_false(ok)
      return (tostring(e):gsub("^[^:]*:%d+: ", ""))
    end
    assert.equal('core.files_beneath: wrong parameter "max_files": expected a non-negative integer, got number',
      err(core.files_beneath, "/tmp", "", -1))
    assert.equal('core.files_beneath: wrong parameter "max_depth": expected a non-negative integer, got number',
      err(core.files_beneath, "/tmp", "", 5, 1.5))
    assert.equal('core.disk_usage: wrong parameter "max_files": expected a non-negative integer, got string',
      err(core.disk_usage, "/tmp", "", "x"))
    local _, cuts = core.files_beneath("/etc", "", 2, 0)
    assert.is_true(cuts.count)
  end)

  it("know the process and its limits", function()
    assert.is_true(core.pid_alive(core.getpid()))
    local soft, hard = core.getrlimit("nofile")
    assert.is_true(soft <= hard)
    assert.is_string(core.hostname())
    assert.matches("/leakbench$", core.exe_path())
    assert.equal("/", core.realpath("/tmp/.."))
  end)
end)

-- lb-net --pool (src/net/pool.h), the real binary (LB_BUILD/lb-net) on a
-- control socket in a folder of its own, driven over HTTP as a run's
-- process drives it (core.uhttp). Each run's programs: started in their
-- own namespaces, where they see their own folder and no other run's, nor
-- the control folder, nor another run's processes; ended with their
-- whole group; their end said in logs/exit. Bad requests are refused.
-- A run's folder is bound entry by entry, only those that are there.
-- Descriptors sent with a POST (core.uhttp_fds, the client that sends them
-- along and checks its arguments) are the run's fds 3, 4, ... and none
-- stays in the pool.
local core = require "leakbench.core"

local build = os.getenv("LB_BUILD") or "build/default"

describe("lb-net --pool", function()
  local top, runs, ctl, sock, h

  local function req(method, path, body)
    return core.uhttp(sock, method, path, body, 10)
  end

  local function argv(...)
    return table.concat({ ... }, "\0") .. "\0"
  end

  -- A run's folder as the harness stages it (Sandbox:stage_pool).
  local function stage(dir)
    for _, sub in ipairs({ "logs", "records", "sock" }) do assert(core.mkdir_p(dir .. "/" .. sub, 493)) end
    assert(core.write_file(dir .. "/script.json", "{}", 420))
    return dir
  end

  local function run_dir(id)
    return stage(runs .. "/" .. id)
  end

  -- How many processes hold PATH open (by their descriptors).
  local function holders(path)
    local r = core.run { argv = { "sh", "-c", 'ls -l /proc/[0-9]*/fd 2>/dev/null | grep -cF -- "-> $1$"', "sh", path } }
    return tonumber(r.stdout:match("%d+"))
  end

  local function wait_for(fn, what)
    local deadline = core.now() + 10
    while core.now() < deadline do
      local v = fn()
      if v then return v end
      core.sleep(0.02)
    end
    error("never: " .. what)
  end

  setup(function()
    -- not under /tmp: each run gets a /tmp of its own, over it
    top = assert(core.tmpdir("lb-pool-spec-", "/var/tmp"))
    runs, ctl = top .. "/runs", top .. "/ctl"
    assert(core.mkdir_p(runs, 493))
    assert(core.mkdir_p(ctl, 448))
    sock = ctl .. "/pool.sock"
    h = assert(core.start { argv = { build .. "/lb-net", "--pool", "unix:" .. sock, "--runs", runs },
      stdout = top .. "/pool.out", stderr = top .. "/pool.out" })
    wait_for(function() return (core.read_file(top .. "/pool.out") or ""):find("lb-net: pool listening", 1, true) end,
      "the ready line: " .. tostring(core.read_file(top .. "/pool.out")))
  end)

  teardown(function()
    if h then
      h:kill("SIGTERM")
      local r = h:wait(10)
      assert.equal(0, r and r.status)
      h:close()
    end
    core.rmtree(top)
  end)

  it("starts a run's argv in namespaces of its own: its folder only, its own /tmp, its log", function()
    local d = run_dir("r-see")
    core.write_file(runs .. "/other-secret", "not yours\n", 420)
    run_dir("r-other")
    core.write_file(runs .. "/r-other/logs/x", "not yours either\n", 420)
    local _, other = req("POST", "/runs/r-other", argv("sleep", "60"))
    assert.truthy(tonumber(other))
    local status, pid = req("POST", "/runs/r-see", argv("sh", "-c",
      "kill -0 " .. other .. " 2>/dev/null && echo SIGNALS-OTHER; " ..
      "echo cwd=$PWD; ls -a " .. runs .. " | tr '\\n' ' '; echo; ls " .. ctl .. " | wc -l; "
      .. "cat " .. runs .. "/r-other/logs/x 2>&1 | head -c 0; test -e " .. runs .. "/r-other && echo SEEN-OTHER; "
      .. "echo pid=$$; echo in-own > " .. d .. "/records/own.txt; ls " .. d .. " | tr '\\n' ' '; echo; "
      .. "rmdir " .. d .. "/records 2>/dev/null || mv " .. d .. "/records " .. d .. "/r2 2>/dev/null || echo kept; "
      .. "echo x >> " .. d .. "/script.json 2>/dev/null || echo script-ro; echo done"))
    assert.equal(201, status, pid)
    assert.truthy(tonumber(pid))
    local log = wait_for(function()
      local t = core.read_file(d .. "/logs/up.log") or ""
      return t:find("done", 1, true) and t
    end, "the run's log")
    assert.truthy(log:find("cwd=/tmp/r-see\n", 1, true), log)
    assert.truthy(log:find(". .. r-see \n", 1, true), log)    -- only its own folder under the runs
    assert.truthy(log:find("\n0\n", 1, true), log)             -- the control folder, empty
    assert.falsy(log:find("SEEN-OTHER", 1, true), log)
    assert.truthy(log:find("pid=1\n", 1, true), log)          -- the first of its own PID namespace
    assert.falsy(log:find("SIGNALS-OTHER", 1, true), log)     -- another run's processes are not there
    assert.equal(200, (req("DELETE", "/runs/r-other")))
    assert.equal("in-own\n", core.read_file(d .. "/records/own.txt"))
    assert.truthy(log:find("\nlogs records script.json sock \n", 1, true), log)
    -- its entries are mount points: not to be replaced (by a link for the
    -- harness to follow); the script is read-only
    assert.truthy(log:find("kept\n", 1, true), log)
    assert.truthy(log:find("script-ro\n", 1, true), log)
    assert.equal("dir", core.stat(d .. "/records").type)
    assert.equal("exited 0", wait_for(function() return core.read_file(d .. "/logs/exit") end, "logs/exit"))
    local st, text = req("GET", "/runs/r-see")
    assert.equal(200, st)
    assert.equal("exited 0", text)
    st, text = req("DELETE", "/runs/r-see")
    assert.same({ 200, "exited 0" }, { st, text })
    assert.equal(404, (req("GET", "/runs/r-see")))
  end)

  it("ends a run's whole group on DELETE, and says how its program ended by itself", function()
    local d = run_dir("r-kill")
    -- a child that leaves a grandchild behind, which ignores SIGTERM
    local status = req("POST", "/runs/r-kill", argv("sh", "-c",
      "(trap '' TERM; sleep 300) & echo $! > " .. d .. "/bg; echo started; wait"))
    assert.equal(201, status)
    assert.equal("running", select(2, req("GET", "/runs/r-kill")))
    wait_for(function() return (core.read_file(d .. "/logs/up.log") or ""):find("started", 1, true) end, "start")
    local st, text = req("DELETE", "/runs/r-kill")
    assert.equal(200, st)
    assert.equal("killed by signal 9", text)
    assert.is_nil(core.stat(d .. "/logs/exit"))  -- ended on request, not by itself
    -- nothing of it is left: no process holds its log open any more
    assert.equal(0, holders(d .. "/logs/up.log"))
    run_dir("r-fail")
    assert.equal(201, (req("POST", "/runs/r-fail", argv("sh", "-c", "exit 3"))))
    assert.equal("exited 3", wait_for(function() return core.read_file(runs .. "/r-fail/logs/exit") end, "exit"))
    assert.equal("exited 3", select(2, req("DELETE", "/runs/r-fail")))
  end)

  it("refuses what it cannot do, each with its status", function()
    run_dir("r-twice")
    assert.equal(201, (req("POST", "/runs/r-twice", argv("sleep", "30"))))
    assert.equal(409, (req("POST", "/runs/r-twice", argv("sleep", "30"))))
    assert.equal(200, (req("DELETE", "/runs/r-twice")))
    for _, bad in ipairs({ "/runs/../ctl", "/runs/", "/runs/a.b", "/runs/" .. ("x"):rep(65), "/other/x" }) do
      assert.equal(404, (req("POST", bad, argv("true"))), bad)
    end
    assert.equal(400, (req("POST", "/runs/r-bad", "true")))           -- not NUL-ended
    assert.equal(400, (req("POST", "/runs/r-bad", argv("a", "", "b")))) -- an empty string
    assert.equal(404, (req("GET", "/runs/r-never")))
    assert.equal(404, (req("DELETE", "/runs/r-never")))
    run_dir("r-put")
    assert.equal(201, (req("POST", "/runs/r-put", argv("sleep", "30"))))
    assert.equal(405, (req("PUT", "/runs/r-put", "x")))
    assert.equal(200, (req("DELETE", "/runs/r-put")))
    -- a program that cannot run: a run that ended, said in its log
    run_dir("r-none")
    assert.equal(201, (req("POST", "/runs/r-none", argv("/no/such/program"))))
    assert.equal("exited 127", wait_for(function() return core.read_file(runs .. "/r-none/logs/exit") end, "exit"))
    assert.truthy(core.read_file(runs .. "/r-none/logs/up.log"):find("cannot run '/no/such/program'", 1, true))
    req("DELETE", "/runs/r-none")
  end)

  -- The descriptor of this process open on PATH (found by /proc/self/fd).
  local function fd_of(path)
    for _, n in ipairs(assert(core.listdir("/proc/self/fd"))) do
      if core.realpath("/proc/self/fd/" .. n) == path then return tonumber(n) end
    end
    error("no descriptor on " .. path)
  end

  -- Whether the pool (its own process, not a run's) has none of its
  -- descriptors open on PATH.
  local function pool_free_of(path)
    local dir = "/proc/" .. h:pid() .. "/fd"
    for _, n in ipairs(assert(core.listdir(dir))) do
      if core.realpath(dir .. "/" .. n) == path then return false end
    end
    return true
  end

  it("gives a run the descriptors sent with its POST as fds 3, 4, in order, and keeps none", function()
    local d = run_dir("r-fds")
    local a_path, b_path = top .. "/fd-a", top .. "/fd-b"
    local a, b = assert(io.open(a_path, "w")), assert(io.open(b_path, "w"))
    finally(function() a:close(); b:close() end)
    a_path, b_path = core.realpath(a_path), core.realpath(b_path)
    local st, pid = core.uhttp_fds(sock, "POST", "/runs/r-fds", argv("sh", "-c",
      "echo first >&3; echo second >&4; ls /proc/self/fd | tr '\\n' ' '; echo; echo done"),
      { fd_of(a_path), fd_of(b_path) }, 10)
    assert.equal(201, st, pid)
    assert.truthy(tonumber(pid))
    local log = wait_for(function()
      local t = core.read_file(d .. "/logs/up.log") or ""
      return t:find("done", 1, true) and t
    end, "the run's log")
    -- written through the descriptors, to files outside the run's folder
    assert.equal("first\n", core.read_file(a_path))
    assert.equal("second\n", core.read_file(b_path))
    -- nothing else open across exec (5: ls's own listing)
    assert.equal("0 1 2 3 4 5 \ndone\n", log)
    wait_for(function() return pool_free_of(a_path) and pool_free_of(b_path) end, "the pool's copies closed")
    assert.equal(200, (req("DELETE", "/runs/r-fds")))
  end)

  it("closes the descriptors sent with anything but a POST it starts", function()
    local path = top .. "/fd-c"
    local f = assert(io.open(path, "w"))
    finally(function() f:close() end)
    path = core.realpath(path)
    local fd = fd_of(path)
    run_dir("r-busy")
    assert.equal(201, (req("POST", "/runs/r-busy", argv("sleep", "30"))))
    local nine = {}
    for i = 1, 9 do nine[i] = fd end
    for _, c in ipairs({
      { 409, "POST", "/runs/r-busy", argv("sleep", "30"), { fd, fd } },
      { 404, "GET", "/runs/r-never", nil, { fd } },
      { 200, "GET", "/runs/r-busy", nil, { fd } },
      { 405, "PUT", "/runs/r-busy", "x", { fd } },
      { 404, "POST", "/other/x", argv("true"), { fd } },
      { 400, "POST", "/runs/r-nine", argv("true"), nine },
    }) do
      local st, body = core.uhttp_fds(sock, c[2], c[3], c[4], c[5], 10)
      assert.equal(c[1], st, c[2] .. " " .. c[3] .. ": " .. tostring(body))
    end
    assert.equal("too many descriptors", select(2, core.uhttp_fds(sock, "POST", "/runs/r-nine", argv("true"), nine)))
    assert.is_nil(core.stat(runs .. "/r-nine"))
    assert.equal(200, (core.uhttp_fds(sock, "DELETE", "/runs/r-busy", nil, { fd })))
    wait_for(function() return pool_free_of(path) end, "none kept")
  end)

  it("binds the entries of a run's folder that are there, some read-only", function()
    -- a run's trap, as the harness stages it: logs, egress, trap-ca, keep
    local d = runs .. "/r-trap"
    for _, sub in ipairs({ "logs", "egress", "trap-ca", "keep" }) do assert(core.mkdir_p(d .. "/" .. sub, 493)) end
    assert(core.write_file(d .. "/keep/secrets.hex", "6869\n", 420))
    assert.equal(201, (req("POST", "/runs/r-trap", argv("sh", "-c",
      "ls " .. d .. " | tr '\\n' ' '; echo; echo e > " .. d .. "/egress/e; echo c > " .. d .. "/trap-ca/c; "
      .. "cat " .. d .. "/keep/secrets.hex; (echo x >> " .. d .. "/keep/secrets.hex) 2>/dev/null || echo keep-ro; "
      .. "(echo x > " .. d .. "/keep/new) 2>/dev/null || echo keep-ro; echo done"))))
    local log = wait_for(function()
      local t = core.read_file(d .. "/logs/up.log") or ""
      return t:find("done", 1, true) and t
    end, "the trap run's log")
    assert.equal("egress keep logs trap-ca \n6869\nkeep-ro\nkeep-ro\ndone\n", log)
    assert.equal("e\n", core.read_file(d .. "/egress/e"))
    assert.equal("c\n", core.read_file(d .. "/trap-ca/c"))
    assert.equal("6869\n", core.read_file(d .. "/keep/secrets.hex"))
    assert.equal(200, (req("DELETE", "/runs/r-trap")))
    -- logs alone
    local only = runs .. "/r-logs"
    assert(core.mkdir_p(only .. "/logs", 493))
    assert.equal(201, (req("POST", "/runs/r-logs", argv("sh", "-c", "ls " .. only .. "; echo done"))))
    assert.equal("logs\ndone\n", wait_for(function()
      local t = core.read_file(only .. "/logs/up.log") or ""
      return t:find("done", 1, true) and t
    end, "the logs-only run's log"))
    assert.equal(200, (req("DELETE", "/runs/r-logs")))
    -- no logs: the run cannot start (nowhere to say why but its status)
    assert(core.mkdir_p(runs .. "/r-nologs/egress", 493))
    assert.equal(201, (req("POST", "/runs/r-nologs", argv("true"))))
    assert.equal("exited 127", wait_for(function()
      local _, t = req("GET", "/runs/r-nologs")
      return t ~= "running" and t
    end, "the run without logs to end"))
    assert.equal(200, (req("DELETE", "/runs/r-nologs")))
  end)

  it("core.uhttp_fds: misuse raises, an environment that fails returns nil, msg", function()
    local function raises(msg, ...)
      local args = table.pack(...)
      local ok, err = pcall(function() return core.uhttp_fds(table.unpack(args, 1, args.n)) end)
      assert.falsy(ok)
      assert.truthy(tostring(err):find(msg, 1, true), tostring(err))
    end
    raises('core.uhttp_fds: wrong parameter "fds": expected table, got nil', sock, "GET", "/runs/x", nil, nil)
    local x = { sock, "GET", "/runs/x", nil }
    raises('core.uhttp_fds: wrong parameter "fds[2]": expected a descriptor >= 0', x[1], x[2], x[3], nil, { 0, -1 })
    raises('core.uhttp_fds: wrong parameter "fds[1]": expected integer, got string', x[1], x[2], x[3], nil, { "3" })
    raises('core.uhttp_fds: wrong parameter "fds": expected at most 16 descriptors', x[1], x[2], x[3], nil,
      { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 })
    raises('core.uhttp_fds: wrong parameter "timeout": expected 0 < seconds <= 86400', x[1], x[2], x[3], nil, {}, 0)
    local st, err = core.uhttp_fds(top .. "/no.sock", "GET", "/runs/x", nil, {}, 5)
    assert.is_nil(st)
    assert.equal("cannot request '/runs/x' on '" .. top .. "/no.sock': no such file or directory", err)
    st, err = core.uhttp_fds(sock, "GET", "/runs/r-never", nil, {})
    assert.same({ 404, "no such run" }, { st, err })
  end)

  -- A pool of its own on TOP2 (the shared one must outlive this test),
  -- ended and removed at the test's end (the test's one finally: busted
  -- keeps the last).
  local function own_pool()
    local top2 = assert(core.tmpdir("lb-pool-spec2-", "/var/tmp"))
    assert(core.mkdir_p(top2 .. "/ctl", 448))
    assert(core.mkdir_p(top2 .. "/runs", 493))
    local s2 = top2 .. "/ctl/pool.sock"
    local h2 = assert(core.start { argv = { build .. "/lb-net", "--pool", "unix:" .. s2, "--runs", top2 .. "/runs" },
      stdout = top2 .. "/out", stderr = top2 .. "/out" })
    finally(function()
      h2:kill("SIGKILL")
      h2:wait(5)
      h2:close()
      core.rmtree(top2)
    end)
    -- its ready line, printed once it listens (its socket's file is there
    -- from its bind on, when a connection is still refused)
    wait_for(function() return (core.read_file(top2 .. "/out") or ""):find("lb-net: pool listening", 1, true) end,
      "its ready line")
    return top2, s2, h2
  end

  it("ends itself, with status 0, once every run it holds has had its DELETE after one ?final", function()
    local top2, s2, h2 = own_pool()
    for _, id in ipairs({ "a", "a-trap", "b" }) do
      stage(top2 .. "/runs/" .. id)
      assert.equal(201, (core.uhttp(s2, "POST", "/runs/" .. id, argv("sleep", "300"), 10)))
    end
    -- a query it does not know, or ?final on anything but a DELETE: refused, nothing ends
    assert.equal(404, (core.uhttp(s2, "DELETE", "/runs/b?final=1", nil, 10)))
    assert.equal(404, (core.uhttp(s2, "DELETE", "/runs/b?x", nil, 10)))
    assert.equal(404, (core.uhttp(s2, "GET", "/runs/b?final", nil, 10)))
    assert.equal(404, (core.uhttp(s2, "POST", "/runs/c?final", argv("true"), 10)))
    -- the last run's first program: the pool keeps serving the others
    assert.equal(200, (core.uhttp(s2, "DELETE", "/runs/a?final", nil, 10)))
    core.sleep(0.3)
    assert.is_nil(h2:wait(0))
    assert.equal("running", select(2, core.uhttp(s2, "GET", "/runs/b", nil, 10)))
    assert.equal(200, (core.uhttp(s2, "DELETE", "/runs/a-trap", nil, 10)))
    core.sleep(0.3)
    assert.is_nil(h2:wait(0))
    -- the last one: it ends, and says so
    assert.equal(200, (core.uhttp(s2, "DELETE", "/runs/b", nil, 10)))
    local r = h2:wait(10)
    assert.equal(0, r and r.status)
    assert.truthy(core.read_file(top2 .. "/out"):find("lb-net: pool: the suite's last run has ended", 1, true))
  end)

  it("ends at once on a ?final when no other run is left", function()
    local top2, s2, h2 = own_pool()
    stage(top2 .. "/runs/only")
    assert.equal(201, (core.uhttp(s2, "POST", "/runs/only", argv("sleep", "300"), 10)))
    assert.equal("killed by signal 9", select(2, core.uhttp(s2, "DELETE", "/runs/only?final", nil, 10)))
    local r = h2:wait(10)
    assert.equal(0, r and r.status)
    assert.equal(0, holders(top2 .. "/runs/only/logs/up.log"))
  end)

  it("ends every run's group on SIGTERM, and exits 0", function()
    local top2, s2, h2 = own_pool()
    stage(top2 .. "/runs/r1")
    local st = core.uhttp(s2, "POST", "/runs/r1", argv("sh", "-c", "echo up; exec sleep 300"), 10)
    assert.equal(201, st)
    wait_for(function() return (core.read_file(top2 .. "/runs/r1/logs/up.log") or ""):find("up") end, "up")
    h2:kill("SIGTERM")
    local r = h2:wait(10)
    assert.equal(0, r and r.status)
    assert.equal(0, holders(top2 .. "/runs/r1/logs/up.log"))
  end)
end)

-- The suite's podman service (LEAKBENCH_PODMAN_SERVICE=1, podman.lua's
-- Service): runs create their detached containers through its REST API,
-- with exactly the hardening the CLI gives them (podman inspect of both
-- compared, container by container of one run's topology); the service
-- ends with the suite, SIGINT included, leaving no process, socket or
-- container; a service that cannot start leaves the runs to the CLI, and
-- stderr says so.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local pq = require "podman"
local cjson = require "cjson"
local tmpdir, read, must = sh.tmpdir, sh.read, sh.must

-- the service, the claude container included (both are the default)
local ON = { LEAKBENCH_PODMAN_SERVICE = "1" }

local function results(out)
  return cjson.decode(must(read(out .. "/results.json"), "no results.json in " .. out))
end

-- Processes whose command line names PATH (the service's socket).
local function processes_naming(path)
  local r = sh.run({ "ps", "-eo", "pid=,args=" })
  local out = {}
  for line in r.stdout:gmatch("[^\n]+") do
    if line:find(path, 1, true) and not line:find("ps -eo", 1, true) then out[#out + 1] = line end
  end
  return out
end

-- The claude container of the run in DIR has started: its conmon's log
-- (through the service) or its attached podman's output file (the CLI).
local function claude_started(dir)
  return read(dir .. "/containers/claude.ctr.log") or read(dir .. "/stream.jsonl")
end

describe("the podman service", function()
  local dir = tmpdir()
  teardown(function() sh.rmtree(dir) end)

  it("creates a run's containers with the CLI's hardening, field by field", function()
    local out = dir .. "/images"
    local r = sh.leakbench({ "run", "spec/fixtures/e2e/three-turns.lua", "--out", out, "--jobs", "1" })
    local imgs = results(out).images
    assert.truthy(imgs and imgs.claude and imgs.proxy, r.stderr)
    local scratch = dir .. "/compare"
    os.execute("mkdir -p " .. sh.quote(scratch))
    local c = sh.leakbench({ "lua", "spec/e2e/support/service_compare.lua", scratch, imgs.claude, imgs.proxy })
    assert.are.equal(0, c.status, c.stderr)
    assert.are.equal("", c.stderr)
    local doc = cjson.decode(c.stdout)
    -- podman's seccomp profile, narrowed to the native interface
    -- (podman.seccomp_profile), where this machine has podman's
    local seccomp = doc.seccomp and "seccomp=" .. doc.seccomp
    local roles, paths = {}, {}
    for role, v in pairs(doc.containers) do
      roles[#roles + 1] = role
      -- where each writes its log differs by name only
      paths[role] = v.api.log.Path
      assert.are.equal((v.cli.log.Path:gsub("%-cli%.ctr%.log$", "")), (v.api.log.Path:gsub("%-api%.ctr%.log$", "")))
      v.cli.log.Path, v.api.log.Path = nil, nil
      assert.are.same(v.cli, v.api, role)
      assert.are.same({ "no-new-privileges", seccomp }, v.api.security_opt, role)
      assert.is_true(v.api.readonly, role)
      assert.truthy(v.api.pids > 0 and v.api.memory > 0, role)
    end
    table.sort(roles)
    assert.are.same({ "claude", "net", "up" }, roles)
    assert.are.same({ "CAP_NET_ADMIN", "CAP_NET_RAW" }, doc.containers.net.api.effective_caps)
    assert.are.equal(cjson.null, doc.containers.claude.api.effective_caps)
    assert.are.equal("container:net", doc.containers.claude.api.netns)
    assert.are.equal("none", doc.containers.up.api.netns)
    -- the claude container, as a run through the service creates it: its
    -- output in a log with no cap (a cap starts it over), its own limits
    local claude = doc.containers.claude.api
    assert.are.equal("k8s-file", claude.log.Type)
    assert.are.equal("0B", claude.log.Size)
    assert.matches("/containers/claude%-api%.ctr%.log$", paths.claude)
    local fsize, init_mount = false, false
    for _, u in ipairs(claude.ulimits or {}) do
      if u.Name == "RLIMIT_FSIZE" and u.Hard > 0 and u.Hard == u.Soft then fsize = true end
    end
    for _, m in ipairs(claude.mounts) do
      -- lb-init's files: a read-only bind of their host copy (images.init_copy)
      if m.destination == "/opt/leakbench" then init_mount = m.type == "bind" and m.rw == false end
    end
    assert.is_true(fsize, "no fsize limit on the claude container")
    -- podman 4.3's inspect shows no masked paths: isolation_spec reads
    -- /proc/cmdline from the agent, in a run through the service
    assert.is_true(init_mount, "lb-init's files are not bound read-only")
    assert.are.equal("1000:1000", claude.user)
  end)

  -- Rootless too (the user .ci/rootless-setup makes, with the images that
  -- rootless_spec puts in its store): a run through the service, and the
  -- same comparison.
  it("rootless: runs through it, with the CLI's hardening", function()
    local imgs = results(dir .. "/images").images
    local rdir, as_user = pq.rootless_tree("lbrootless", { imgs.claude, imgs.proxy }, "lb-rootless-svc", "cmp")
    if not rdir then pending(as_user) return end
    finally(function() sh.rmtree(rdir) end)
    local r = as_user("LEAKBENCH_PODMAN_SERVICE=1 ./leakbench run "
      .. "spec/fixtures/e2e/three-turns.lua --out "
      .. sh.quote(rdir .. "/out"))
    local doc = results(rdir .. "/out")
    assert.are.equal("pass", doc.runs[1].verdict, tostring(doc.runs[1].reason) .. "\n" .. r.stderr)
    -- the sidecar and claude; the model and proxy in the suite's upstream
    assert.are.equal(2, doc.runs[1].timings.podman_api)
    assert.is_nil(doc.runs[1].timings.pool_fallback)
    local c = as_user("./leakbench lua spec/e2e/support/service_compare.lua " .. sh.quote(rdir .. "/cmp") .. " "
      .. sh.quote(imgs.claude) .. " " .. sh.quote(imgs.proxy))
    assert.are.equal(0, c.status, c.stderr)
    for role, v in pairs(cjson.decode(c.stdout).containers) do
      v.cli.log.Path, v.api.log.Path = nil, nil
      assert.are.same(v.cli, v.api, role)
    end
  end)

  it("carries a suite: the runs' containers go through it, and nothing is left", function()
    local out = dir .. "/on"
    local tr = dir .. "/on-trace.jsonl"
    local env = { LEAKBENCH_TRACE = tr }
    for k, v in pairs(ON) do env[k] = v end
    local r = sh.leakbench({ "run", "spec/fixtures/e2e/three-turns.lua", "spec/fixtures/runner/scenarios/a-pass.lua",
      "--out", out, "--jobs", "1" }, { env = env })
    local doc = results(out)
    -- Who removed what (the trace: one line per request, with its pid).
    -- The first run's claude container: the runner, while the second
    -- started (podman.DEFER_ENV). The last run's: the run itself, while
    -- it scanned its evidence (sandbox.LAST_RUN_ENV); its DELETE of its
    -- programs in the suite's upstream says ?final, the upstream ends
    -- itself, and the runner removes it without a SIGKILL.
    local lines, runner, run_pid, order = {}, nil, {}, {}
    for line in must(read(tr), "no trace"):gmatch("[^\n]+") do
      local e = cjson.decode(line)
      lines[#lines + 1] = e
      if e.what == "service start" then runner = e.pid end
      local id = e.what:match("^run (%S+)")
      if id then order[#order + 1] = id end
    end
    for _, e in ipairs(lines) do
      if e.what == "stage" then run_pid[#run_pid + 1] = e.pid end
    end
    assert.are.equal(2, #order)
    assert.are.equal(2, #run_pid)
    local function deleted_by(what)
      local by = {}
      for _, e in ipairs(lines) do
        if e.what:find(what, 1, true) then by[#by + 1] = e.pid end
      end
      return by
    end
    assert.are.same({ runner }, deleted_by("DELETE /containers/lb-" .. order[1] .. "-claude"))
    assert.are.same({ run_pid[2] }, deleted_by("DELETE /containers/lb-" .. order[2] .. "-claude"))
    assert.are.equal(1, #deleted_by("?final"))
    assert.are.equal(0, #deleted_by("-pool/kill"))
    assert.are.same({ runner }, deleted_by("-pool?force=true"))
    assert.are.equal(2, #doc.runs, r.stderr)
    for _, run in ipairs(doc.runs) do
      assert.are.equal("pass", run.verdict, tostring(run.reason) .. "\n" .. r.stderr)
      -- rootful, no network sidecar: the trap and the bridge are in the
      -- suite's upstream (sandbox.lua's hold_sockets)
      assert.are.equal(1, run.timings.podman_api, "claude, through the service")
      assert.is_nil(run.timings.pool_fallback, "the model and proxy in the suite's upstream")
      -- each phase's wall time, and the machine's CPU in it (bench_runner)
      for _, p in ipairs({ "stage", "containers", "setup", "claude", "cleanup", "evidence" }) do
        assert.is_number(run.timings[p], p)
        assert.is_number(run.timings[p .. "_cpu"], p .. "_cpu")
      end
      -- Claude Code's output, from its container's log
      assert.matches('"type":"result"', read(run.dir .. "/stream.jsonl"))
      assert.is_nil(read(run.dir .. "/containers-to-remove.txt"))
    end
    assert.is_nil(read(out .. "/podman.sock"))
    assert.are.same({}, processes_naming(out .. "/podman.sock"))
    assert.are.same({}, pq.containers("leakbench.suite=" .. doc.suite_id))
  end)

  it("is the default for the claude container too; LEAKBENCH_PODMAN_SERVICE_CLAUDE=0 leaves it to the CLI", function()
    local cases = {
      { "default", {}, 1 },
      { "claude-cli", { LEAKBENCH_PODMAN_SERVICE_CLAUDE = "0" }, 0 },
      -- each run's own upstream container and its network sidecar
      { "own-upstream", { LEAKBENCH_POOL = "0" }, 3 },
      -- the sidecar where the suite's upstream would hold the trap
      { "sidecar", { LEAKBENCH_SIDECAR = "1" }, 2 },
    }
    for _, c in ipairs(cases) do
      local out = dir .. "/" .. c[1]
      local r = sh.leakbench({ "run", "spec/fixtures/e2e/three-turns.lua", "--out", out, "--jobs", "1" },
        { env = c[2] })
      local run = results(out).runs[1]
      assert.are.equal("pass", run.verdict, c[1] .. ": " .. tostring(run.reason) .. "\n" .. r.stderr)
      assert.are.equal(c[3], run.timings.podman_api or 0, c[1])
      assert.truthy((read(run.dir .. "/stream.jsonl") or ""):find('"type":"result"', 1, true), c[1])
      assert.are.same({}, pq.containers("leakbench.suite=" .. results(out).suite_id))
    end
  end)

  it("stops with the suite on SIGINT: no service, no socket, no container", function()
    local out = dir .. "/int"
    local script = dir .. "/run.sh"
    sh.write(script, "#!/bin/sh\nLEAKBENCH_PODMAN_SERVICE=1 "
      .. sh.quote(os.getenv("LEAKBENCH"))
      .. " run spec/fixtures/runner/scenarios/d-slow.lua spec/fixtures/runner/scenarios/a-pass.lua"
      .. " --jobs 1 --out " .. sh.quote(out .. "/res") .. " >" .. sh.quote(dir .. "/stdout") .. " 2>"
      .. sh.quote(dir .. "/stderr") .. " &\necho $! > " .. sh.quote(dir .. "/pid") .. "\nwait $!\necho $? > "
      .. sh.quote(dir .. "/status") .. "\n")
    os.execute("sh " .. sh.quote(script) .. " &")
    local pid = sh.retry(10, function() return (read(dir .. "/pid") or ""):match("%d+") end)
    assert.truthy(pid, "the run did not start")
    local sock = out .. "/res/podman.sock"
    local started = sh.retry(300, function() return claude_started(out .. "/res/d-slow/baseline/1") end)
    assert.truthy(started, "claude never started: " .. tostring(read(dir .. "/stderr")))
    assert.truthy(#processes_naming(sock) > 0, "no service while the suite runs")
    os.execute("kill -INT " .. pid)
    local status = sh.retry(60, function() return (read(dir .. "/status") or ""):match("%d+") end)
    assert.are.equal("130", status, read(dir .. "/stderr"))
    local doc = results(out .. "/res")
    assert.is_true(doc.interrupted)
    assert.are.same({}, processes_naming(sock))
    assert.is_nil(sh.run({ "test", "-e", sock }).status == 0 and sock or nil)
    assert.are.same({}, pq.containers("leakbench.suite=" .. doc.suite_id))
  end)

  it("ends when the runner is killed outright (SIGKILL)", function()
    local out = dir .. "/kill"
    local script = dir .. "/kill.sh"
    sh.write(script, "#!/bin/sh\nLEAKBENCH_PODMAN_SERVICE=1 "
      .. sh.quote(os.getenv("LEAKBENCH"))
      .. " run spec/fixtures/runner/scenarios/d-slow.lua --jobs 1 --out " .. sh.quote(out)
      .. " >/dev/null 2>&1 &\necho $! > " .. sh.quote(dir .. "/kill.pid") .. "\n")
    os.execute("sh " .. sh.quote(script))
    local pid = sh.retry(10, function() return (read(dir .. "/kill.pid") or ""):match("%d+") end)
    assert.truthy(pid, "the run did not start")
    local sock = out .. "/podman.sock"
    local started = sh.retry(300, function() return claude_started(out .. "/d-slow/baseline/1") end)
    assert.truthy(started, "claude never started")
    assert.truthy(#processes_naming(sock) > 0, "no service while the suite runs")
    os.execute("kill -KILL " .. pid)
    assert.truthy(sh.retry(30, function() return #processes_naming(sock) == 0 end),
      table.concat(processes_naming(sock), "\n"))
    -- The run's own process goes on to its end; what the killed suite
    -- leaves is `leakbench clean`'s, as after any kill: removed here by its
    -- suite's label (other suites may be running on this machine).
    local suite = must(pq.suite_of(out))
    assert.truthy(sh.retry(120, function() return read(out .. "/d-slow/baseline/1/result.json") end))
    for _, name in ipairs(pq.containers("leakbench.suite=" .. suite)) do
      sh.run({ "podman", "rm", "-f", "-i", "-t", "0", name })
    end
    assert.are.same({}, pq.containers("leakbench.suite=" .. suite))
  end)

  -- conmon runs podman's exit command, `podman container cleanup`, at a
  -- container's end: a podman process each time, whose work the removal
  -- does. The service runs conmon through lb-conmon, which drops it.
  it("runs conmon without podman's exit command; LEAKBENCH_PODMAN_CLEANUP=1 keeps it", function()
    local imgs = results(dir .. "/images").images
    local cases = { { "lb-conmon", {}, false }, { "cleanup", { LEAKBENCH_PODMAN_CLEANUP = "1" }, true } }
    for _, c in ipairs(cases) do
      local scratch = dir .. "/conmon-" .. c[1]
      os.execute("mkdir -p " .. sh.quote(scratch))
      local r = sh.leakbench({ "lua", "spec/e2e/support/service_conmon.lua", scratch, imgs.proxy }, { env = c[2] })
      assert.are.equal(0, r.status, r.stderr)
      local doc = cjson.decode(r.stdout)
      local argv = table.concat(doc.argv, " ")
      assert.are.equal(c[3], argv:find("--exit-command", 1, true) ~= nil, c[1] .. ": " .. argv)
      local cleanup = false
      for _, a in ipairs(doc.argv) do cleanup = cleanup or a == "cleanup" end
      assert.are.equal(c[3], cleanup, c[1] .. ": " .. argv)
      -- the real conmon, with the rest of podman's arguments
      assert.matches("/conmon$", doc.exe, 1)
      assert.truthy(argv:find("--exit-dir ", 1, true) and argv:find(" -c ", 1, true), argv)
      if c[3] then
        assert.is_nil(doc.folder, c[1])
      else
        -- the link's folder: the service's own while it runs, gone after
        assert.are.equal(tonumber("700", 8), doc.folder.mode % 4096, doc.folder.path)
        assert.is_false(doc.left, c[1])
      end
      assert.are.same({}, pq.containers("leakbench.test=service_conmon"))
    end
  end)

  it("falls back to the CLI when it cannot start, and says so", function()
    -- a run folder whose socket path is longer than a Unix socket's
    local out = dir .. "/" .. string.rep("x", 110)
    local r = sh.leakbench({ "run", "spec/fixtures/e2e/three-turns.lua", "--out", out, "--jobs", "1" }, { env = ON })
    assert.matches("leakbench: cannot start the podman service: the socket path '[^\n]*' is longer than "
      .. "107 bytes: the runs use the podman CLI\n", r.stderr)
    local run = results(out).runs[1]
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. "\n" .. r.stderr)
    assert.is_nil(run.timings.podman_api)
  end)
end)

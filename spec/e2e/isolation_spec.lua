-- Isolation, probed from inside the claude container by scripted Bash
-- calls, with and without an interceptor: the first hop answers and
-- nothing else does: no other port on loopback, no interface but lo, no
-- route, no nameserver but loopback, none of the host's addresses (where a
-- listener of this test waits on every address), no run started in
-- parallel. "No route out" is proven from the container's own state (every
-- route of every table, the rules): the simulated internet (198.18.0.0/15)
-- is a local route on lo there and nowhere else; no traffic is sent to any
-- address that is not loopback, the host's own or a simulated one.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local pq = require "podman"
local cjson = require "cjson"
local tmpdir, read, must = sh.tmpdir, sh.read, sh.must

-- What listens in the claude container's netns: its sidecar's bridge to
-- the API and the egress trap (DNS and the HTTP proxy), nothing else.
-- 127.0.0.1:1 is where lb-net hands the trap the simulated internet.
local LISTEN_TCP = "127.0.0.1:1 127.0.0.1:3128 127.0.0.1:53 127.0.0.1:8080 "
local LISTEN_UDP = "127.0.0.1:1 127.0.0.1:53 "
-- Every IPv4 route of every table in the claude container's netns: the
-- kernel's own for loopback, and the simulated internet, local on lo.
local ROUTES_ALL = "broadcast 127.255.255.255 dev lo table local proto kernel scope link src 127.0.0.1 ;"
  .. "local 127.0.0.0/8 dev lo table local proto kernel scope host src 127.0.0.1 ;"
  .. "local 127.0.0.1 dev lo table local proto kernel scope host src 127.0.0.1 ;"
  .. "local 198.18.0.0/15 dev lo table local scope host ;"
local RULES = "0: from all lookup local;32766: from all lookup main;32767: from all lookup default;"

local function results(out)
  return cjson.decode(must(read(out .. "/results.json"), "no results.json in " .. out))
end

-- The final answer of a run, from its stream.
local function answer(dir)
  for line in (read(dir .. "/stream.jsonl") or ""):gmatch("[^\n]+") do
    local ok, ev = pcall(cjson.decode, line)
    if ok and type(ev) == "table" and ev.type == "result" then return ev.result or "" end
  end
  return ""
end

local function fill(template, out, vars)
  local text = must(read(template), template)
  text = text:gsub("@(%u[%u_]*)@", vars)
  local f = assert(io.open(out, "wb"))
  f:write(text)
  f:close()
end

local function by_name(doc)
  local t = {}
  for _, r in ipairs(doc.runs) do t[r.scenario .. "/" .. r.subject] = r end
  return t
end

local function check_probe(a, host_addrs)
  assert.matches("IFACES lo \n", a, 1, true)
  assert.matches("ROUTES4 0\n", a, 1, true)
  assert.matches("ROUTES6 0\n", a, 1, true)
  assert.matches("GATEWAYS 0\n", a, 1, true)
  assert.matches("NAMESERVERS 127.0.0.1 \n", a, 1, true)
  assert.matches("REACH first-hop yes", a, 1, true)
  local code = a:match("FIRST%-HOP HTTP (%d+)")
  assert.truthy(code and code ~= "000", "the first hop did not answer over HTTP: " .. a)
  assert.matches("LISTEN-TCP " .. LISTEN_TCP .. "\n", a, 1, true)
  assert.matches("LISTEN-UDP " .. LISTEN_UDP .. "\n", a, 1, true)
  for addr in host_addrs:gmatch("%S+") do
    assert.matches("REACH host-" .. addr .. " no", a, 1, true)
  end
  assert.falsy(a:find("REACH gateway", 1, true), "a gateway was probed: " .. a)
  -- The only nameserver is the trap, on loopback.
  assert.matches("REACH nameserver-127.0.0.1 yes", a, 1, true)
  assert.matches("REACH peer no", a, 1, true)
  -- Names resolve into the simulated internet, which exists only here: a
  -- local route on lo, no other route in any table, the default rules, and
  -- the agent cannot change them; the trap answers on any port there.
  local sim = a:match("RESOLVE (198%.1[89]%.%d+%.%d+)\n")
  assert.truthy(sim, "a name did not resolve into 198.18.0.0/15: " .. a)
  assert.matches("ROUTES-ALL " .. ROUTES_ALL .. "\n", a, 1, true)
  assert.matches("ROUTES6-ALL 0\n", a, 1, true)
  assert.matches("RULES " .. RULES .. "\n", a, 1, true)
  assert.matches("ROUTE-DEL no\n", a, 1, true)
  assert.matches("REACH simulated%-198%.1[89]%.%d+%.%d+ yes", a)
  assert.matches("PROBE DONE", a, 1, true)
end

describe("isolation, probed from inside the claude container", function()
  local dir = tmpdir()
  local host_port = tostring(20000 + math.random(0, 9999))
  local peer_port = tostring(30000 + math.random(0, 9999))
  local host_addrs = sh.run({ "hostname", "-I" }).stdout:gsub("%s+$", "")
  local listener

  setup(function()
    fill("spec/fixtures/e2e/isolation/probe.lua.in", dir .. "/probe.lua",
      { HOST_ADDRS = host_addrs, HOST_PORT = host_port, PEER_PORT = peer_port })
    fill("spec/fixtures/e2e/isolation/peer.lua.in", dir .. "/peer.lua", { PEER_PORT = peer_port })
    -- A listener of the test's own on every address of the host.
    local pidfile = dir .. "/listener.pid"
    os.execute("python3 -c 'import socket,time; s=socket.socket(); "
      .. "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((\"0.0.0.0\", "
      .. host_port .. ")); s.listen(64); time.sleep(600)' >/dev/null 2>&1 & echo $! > "
      .. sh.quote(pidfile))
    listener = (read(pidfile) or ""):match("%d+")
    -- Ready when the host itself can connect (at most 10 s).
    local a = host_addrs:match("%S+") or "127.0.0.1"
    for _ = 1, 100 do
      if sh.run({ "timeout", "1", "bash", "-c", "exec 3<>/dev/tcp/" .. a .. "/" .. host_port }).status == 0 then
        break
      end
      os.execute("sleep 0.1")
    end
  end)

  teardown(function()
    if listener then os.execute("kill " .. listener .. " 2>/dev/null") end
    sh.rmtree(dir)
  end)

  it("the host's listener answers on the host itself (the probe could tell)", function()
    assert.truthy(host_addrs:match("%S"), "the host has no address")
    local a = host_addrs:match("%S+")
    local r = sh.run({ "timeout", "3", "bash", "-c", "exec 3<>/dev/tcp/" .. a .. "/" .. host_port })
    assert.are.equal(0, r.status, "nothing listens on " .. a .. ":" .. host_port)
  end)

  it("baseline: reaches its first hop and nothing else, not even a run in parallel", function()
    local out = dir .. "/base"
    local r = sh.leakbench({ "run", dir .. "/probe.lua", dir .. "/peer.lua", "--jobs", "2",
      "--out", out })
    local runs = by_name(results(out))
    local probe, peer = runs["isolation-probe/baseline"], runs["isolation-peer/baseline"]
    assert.are.equal("pass", probe.verdict, tostring(probe.reason) .. r.stderr)
    assert.are.equal("pass", peer.verdict, tostring(peer.reason))
    local a, p = answer(probe.dir), answer(peer.dir)
    check_probe(a, host_addrs)
    -- The simulated internet is local to the runs' namespaces, not the host's.
    local host_routes = sh.run({ "ip", "-4", "route", "show", "table", "all" }).stdout
    assert.falsy(host_routes:find("198.18.", 1, true), host_routes)
    assert.falsy(host_routes:find("198.19.", 1, true), host_routes)
    -- The probe tried the peer's port while the peer listened on it.
    local from = tonumber(p:match("PEER%-LISTEN%-FROM ([%d.]+)"))
    local to = tonumber(p:match("PEER%-LISTEN%-UNTIL ([%d.]+)"))
    local at = tonumber(a:match("PEER%-PROBE%-AT ([%d.]+)"))
    assert.truthy(from and to and at, a .. "\n" .. p)
    assert.truthy(from < at and at < to, ("peer listened %f..%f, probe at %f"):format(from, to, at))
    assert.are.same({}, pq.containers("leakbench.suite=" .. results(out).suite_id))
  end)

  -- Offline runs use no podman network, so they work, and are sealed, with
  -- either backend (CONTAINERS_CONF picks it for the podman calls of the run).
  for _, backend in ipairs({ "cni", "netavark" }) do
    it("with podman's " .. backend .. " network backend: the same, and no network is created", function()
      local conf = dir .. "/containers-" .. backend .. ".conf"
      local f = assert(io.open(conf, "wb"))
      f:write("[network]\nnetwork_backend = \"" .. backend .. "\"\n")
      f:close()
      local env = { CONTAINERS_CONF = conf }
      local info = sh.run({ "podman", "info", "--format", "{{.Host.NetworkBackend}}" }, { env = env })
      assert.are.equal(backend .. "\n", info.stdout, info.stderr)
      local before = sh.run({ "podman", "network", "ls", "-q" }, { env = env }).stdout
      local out = dir .. "/backend-" .. backend
      local r = sh.leakbench({ "run", dir .. "/probe.lua", "--out", out }, { env = env })
      local run = results(out).runs[1]
      assert.are.equal("pass", run.verdict, tostring(run.reason) .. r.stderr)
      check_probe(answer(run.dir), host_addrs)
      assert.are.equal(before, sh.run({ "podman", "network", "ls", "-q" }, { env = env }).stdout)
    end)
  end

  it("behind an interceptor: reaches the interceptor, never the recording proxy", function()
    local out = dir .. "/icp"
    local r = sh.leakbench({ "run", dir .. "/probe.lua", "--subject", "subjects/redactor.lua",
      "--no-baseline", "--out", out })
    local run = results(out).runs[1]
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. r.stderr)
    local a = answer(run.dir)
    check_probe(a, host_addrs)
    -- The interceptor's bridge to the proxy is in the interceptor's netns.
    assert.matches("REACH peer no", a, 1, true)
    local log = read(run.dir .. "/interceptor.log") or ""
    assert.truthy(log:find("listening", 1, true), log)
  end)
end)

-- What the claude container shows of the host: no host path in its mount
-- table (the bind mounts' sources: the run folder, the user's --out dir)
-- and not the host kernel's command line. Podman's own storage paths (the
-- image layers of the root file system) are podman's, not the user's
-- layout, and podman offers no way to hide them.
describe("the host, seen from inside the claude container", function()
  local dir = tmpdir()
  teardown(function() sh.rmtree(dir) end)

  it("shows no host path in its mount table and no host kernel command line", function()
    local out = dir .. "/some-user-dir/runs"
    local r = sh.leakbench({ "run", "spec/fixtures/e2e/isolation/host-paths.lua", "--out", out })
    local run = results(out).runs[1]
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. r.stderr)
    local a = answer(run.dir)
    local mounts = must(a:match("MOUNTINFO%-BEGIN\n(.-)MOUNTINFO%-END"), a)
    local cmdline = must(a:match("CMDLINE%-BEGIN\n(.-)CMDLINE%-END"), a)
    assert.matches(" /work ", mounts, 1, true)
    assert.matches(" /home/bench/.claude ", mounts, 1, true)
    local host = {
      dir, out, run.dir, "some-user-dir", (sh.run({ "pwd" }).stdout:gsub("\n$", "")), "/root",
      (os.getenv("HOME") or "/root"), (dir:match("^(/[^/]+/[^/]+)") or dir),
    }
    for _, p in ipairs(host) do
      assert.is_nil(mounts:find(p, 1, true), ("'%s' is in the container's mount table:\n%s"):format(p, mounts))
      assert.is_nil(cmdline:find(p, 1, true), cmdline)
    end
    local kernel = (read("/proc/cmdline") or ""):gsub("%s+$", "")
    assert.truthy(#kernel > 0, "the host has no kernel command line to hide")
    assert.is_nil(cmdline:find(kernel, 1, true), "the host's kernel command line is visible: " .. cmdline)
    assert.are.equal("", cmdline)
  end)
end)

-- The kernel's system-call interfaces and socket families, seen from
-- inside the claude container: the native interface only, and the
-- families a run needs (podman.seccomp_profile). Machine code
-- the agent maps itself calls getpid through x86_64's 32-bit interface
-- (int 0x80), which podman's default profile lets through; the process
-- is killed (SIGSYS: 128 + 31). The same code through the native
-- interface answers, so the probe can tell. A kernel built or booted
-- without the 32-bit interface (IA32 emulation) has none to let through:
-- the same call on the host, outside any container, is a SIGSEGV (128 +
-- 11), and so it is inside.
local INT80 = [[
import ctypes, mmap
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(b"\xb8\x14\x00\x00\x00\xcd\x80\xc3")  # mov eax,20; int 0x80; ret
f = ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
print("PID", f(), flush=True)
]]

-- How the host's kernel answers INT80 with no seccomp filter: "answers"
-- (it has the 32-bit interface), "segv" (it has none), or nil (no
-- python3 here, or something else happened).
local function host_int80()
  local r = sh.run({ "python3", "-c", INT80 })
  if r.status == 0 and r.stdout:match("^PID %d+") then return "answers" end
  if r.status == 128 + 11 then return "segv" end
  return nil
end

describe("the system-call interfaces and socket families of the claude container", function()
  local dir = tmpdir()
  local r, run, a
  -- one run of the probe; each case reads its answer
  setup(function()
    r = sh.leakbench({ "run", "spec/fixtures/e2e/isolation/syscall-abi.lua", "--out", dir .. "/runs" })
    run = results(dir .. "/runs").runs[1]
    a = answer(run.dir)
  end)
  teardown(function() sh.rmtree(dir) end)

  it("are the native one alone: a 32-bit call (int 0x80) kills its process", function()
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. r.stderr)
    if not a:find("ARCH x86_64", 1, true) then
      pending("the probe's machine code is x86_64's: " .. a)
      return
    end
    assert.matches("PID %d+\nABI native exit 0\n", a)
    assert.is_nil(a:find("PID %d+\nABI int80"), "a 32-bit system call answered: " .. a)
    if host_int80() == "segv" then
      -- no 32-bit interface in this kernel: none inside either
      assert.matches("ABI int80 exit 139\n", a, 1, true)
      return
    end
    assert.matches("ABI int80 exit 159\n", a, 1, true)
  end)

  it("make the socket families a run needs, and no vsock, which no network namespace holds, "
    .. "and reach no kernel keyring", function()
    assert.are.equal("pass", run.verdict, tostring(run.reason) .. r.stderr)
    for _, fam in ipairs({ "inet", "inet6", "unix", "netlink" }) do
      assert.matches("FAMILY " .. fam .. " made\n", a, 1, true)
    end
    -- ENOSYS: the family is not let through (podman's own profile makes it)
    assert.matches("FAMILY vsock refused 38\n", a, 1, true)
    -- nor the kernel keyring, which rootful it shares with the host's
    -- uid 1000 (podman's own profile answers with the keyring's id)
    assert.matches("KEYRING refused 38\n", a, 1, true)
  end)
end)

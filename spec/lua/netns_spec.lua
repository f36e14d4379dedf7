-- A run's own network namespace (core.netns_make, core.netns_drop;
-- Sandbox:make_netns): rootful, claude's sidecar and the claude container
-- join it by path and start together. What is made must be a namespace of
-- its own with loopback up and nothing else, a path that was there must
-- never be written through, a link must never be followed, and whatever
-- is left at a path must go, by the run or by the sweep.
local core = require "leakbench.core"
local podman = require "leakbench.podman"
local clean = require "leakbench.clean"
local sandbox = require "leakbench.sandbox"
local lb = require "leakbench"

local root = core.getuid() == 0

local function sh(cmd, ...)
  return assert(core.run { argv = { "sh", "-c", cmd, "sh", ... }, timeout = 20 })
end

-- The mount at PATH, as /proc/self/mountinfo says (its fs type), or nil.
local function mounted(path)
  for line in (core.read_file("/proc/self/mountinfo") or ""):gmatch("[^\n]+") do
    local at, fs = line:match("^%S+ %S+ %S+ %S+ (%S+) .- %- (%S+)")
    if at == path then return fs end
  end
end

-- The network namespace a path holds, as the kernel numbers it.
local function ns_of(path)
  local r = sh('nsenter --net="$1" readlink /proc/self/ns/net', path)
  return r.status == 0 and r.stdout:match("net:%[(%d+)%]") or nil, r.stderr
end

-- Inside the namespace at PATH: its interfaces, and whether a TCP
-- connection over 127.0.0.1 is answered (loopback up).
local PROBE = [[
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=2)
print("connected")
]]
local function inside(path)
  local devs = sh('nsenter --net="$1" cat /proc/net/dev', path).stdout
  local names = {}
  for name in devs:gmatch("\n%s*([%w_.-]+):") do names[#names + 1] = name end
  local r = sh('nsenter --net="$1" python3 -c "$2"', path, PROBE)
  return names, r.stdout .. r.stderr
end

describe("a run's network namespace", function()
  local dir
  before_each(function() dir = assert(core.tmpdir("lb-netns-")) end)
  after_each(function()
    for _, name in ipairs(core.listdir(dir) or {}) do core.netns_drop(dir .. "/" .. name) end
    core.rmtree(dir)
  end)

  it("is a namespace of its own, with loopback only, up, kept at its path until dropped", function()
    if not root then return pending("needs root (CAP_SYS_ADMIN)") end
    local path = dir .. "/ns"
    assert.is_true(core.netns_make(path))
    assert.are.equal("nsfs", mounted(path))
    local host = assert(sh("readlink /proc/self/ns/net").stdout:match("net:%[(%d+)%]"))
    local ours = assert(ns_of(path))
    assert.are_not.equal(host, ours)
    local names, probe = inside(path)
    assert.are.same({ "lo" }, names)
    assert.matches("connected", probe)
    -- a second namespace is another one
    assert.is_true(core.netns_make(dir .. "/ns2"))
    assert.are_not.equal(ours, ns_of(dir .. "/ns2"))
    assert.is_true(core.netns_drop(path))
    assert.is_nil(mounted(path))
    assert.is_nil(core.stat(path))
    -- nothing there is success
    assert.is_true(core.netns_drop(path))
  end)

  it("is never made through what is at its path already, and leaves it as it was", function()
    if not root then return pending("needs root (CAP_SYS_ADMIN)") end
    local file, link, target = dir .. "/file", dir .. "/link", dir .. "/target"
    assert(core.write_file(file, "keep", 384))
    assert(core.write_file(target, "target", 384))
    assert(core.symlink(target, link))
    local ok, err = core.netns_make(file)
    assert.is_nil(ok)
    assert.are.equal("create '" .. file .. "': file exists", err)
    assert.are.equal("keep", core.read_file(file))
    ok, err = core.netns_make(link)
    assert.is_nil(ok)
    assert.are.equal("create '" .. link .. "': file exists", err)
    assert.are.equal("link", core.stat(link).type)
    assert.is_nil(mounted(target))
    assert.are.equal("target", core.read_file(target))
    -- in a folder that is not there: nothing made
    ok, err = core.netns_make(dir .. "/no/ns")
    assert.is_nil(ok)
    assert.are.equal("create '" .. dir .. "/no/ns': no such file or directory", err)
  end)

  it("drops a link and not the namespace it points at", function()
    if not root then return pending("needs root (CAP_SYS_ADMIN)") end
    local path, link = dir .. "/ns", dir .. "/link"
    assert.is_true(core.netns_make(path))
    assert(core.symlink(path, link))
    assert.is_true(core.netns_drop(link))
    assert.is_nil(core.stat(link))
    assert.are.equal("nsfs", mounted(path))
  end)

  it("outlives its path while a process is in it", function()
    if not root then return pending("needs root (CAP_SYS_ADMIN)") end
    local path = dir .. "/ns"
    assert.is_true(core.netns_make(path))
    local ours = ns_of(path)
    local h = assert(core.start { argv = { "nsenter", "--net=" .. path, "sleep", "30" } })
    local deadline = core.now() + 5
    local seen
    repeat
      seen = (sh("readlink /proc/$1/ns/net", tostring(h:pid())).stdout):match("net:%[(%d+)%]")
      if seen ~= ours then core.sleep(0.02) end
    until seen == ours or core.now() > deadline
    assert.are.equal(ours, seen)
    assert.is_true(core.netns_drop(path))
    assert.are.equal(ours, (sh("readlink /proc/$1/ns/net", tostring(h:pid())).stdout):match("net:%[(%d+)%]"))
    h:kill("SIGKILL")
    h:wait(5)
    h:close()
  end)

  -- From inside the namespace at PATH: whether a TCP connection to
  -- HOST:PORT is accepted (into the backlog of a socket no one serves),
  -- and a datagram sent to 127.0.0.1:53.
  local CONNECT = [[
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.sendto(b"q", ("127.0.0.1", 53))
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2); print("accepted")
except OSError as e:
    print("refused", e)
]]
  local function connect(path, host, port)
    return sh('nsenter --net="$1" python3 -c "$2" "$3" "$4"', path, CONNECT, host, tostring(port)).stdout
  end
  local function open_fds()
    return #(core.listdir("/proc/self/fd") or {})
  end

  it("hands back the sockets it binds inside, and the simulated internet's, which live while held", function()
    if not root then return pending("needs root (CAP_SYS_ADMIN)") end
    if sh("command -v nft").status ~= 0 then return pending("needs nft (nftables) on the host") end
    local path = dir .. "/ns"
    assert.is_true(core.netns_make(path))
    local before = open_fds()
    local host_rules = sh("nft list ruleset").stdout
    local set = assert(core.netns_listen(path, { "tcp:127.0.0.1:8080", "udp:127.0.0.1:53" }, 1))
    -- the rules went into the namespace (nft spawned from the thread that
    -- entered it), not onto the host
    assert.are.equal(host_rules, sh("nft list ruleset").stdout)
    assert.truthy(sh('nsenter --net="$1" nft list ruleset', path).stdout:find("tproxy", 1, true))
    assert.are.equal(5, #set:list())
    assert.are.equal(before + 5, open_fds())
    -- nothing of it on the host's own loopback
    assert.is_nil(core.read_file("/proc/self/net/tcp"):match("0100007F:1F90 %x+:%x+ 0A"))
    assert.are.equal("accepted\n", connect(path, "127.0.0.1", 8080))
    -- any port of any address of 198.18.0.0/15 reaches the simulated internet's listener
    assert.are.equal("accepted\n", connect(path, "198.19.7.1", 4433))
    local t = assert(core.netns_read(path, { "tcp", "udp", "raw" }))
    assert.truthy(t.tcp:match("0100007F:1F90 00000000:0000 0A"))
    assert.truthy(t.tcp:match("0100007F:0001 00000000:0000 0A"))
    -- the datagrams wait in the socket we hold
    assert.is_true(tonumber(t.udp:match("0100007F:0035 00000000:0000 07 %x+:(%x+)"), 16) > 0)
    set:close()
    set:close()
    assert.are.equal(before, open_fds())
    assert.truthy(connect(path, "127.0.0.1", 8080):match("^refused"))
    assert.is_nil(core.netns_read(path, { "tcp" }).tcp:match(":1F90 %x+:%x+ 0A"))
  end)

  it("sets up the simulated internet again in a namespace that has it, as a sidecar after the run does", function()
    if not root then return pending("needs root (CAP_SYS_ADMIN)") end
    if sh("command -v nft").status ~= 0 then return pending("needs nft (nftables) on the host") end
    local path = dir .. "/ns"
    assert.is_true(core.netns_make(path))
    assert(core.netns_listen(path, {}, 1)):close()
    -- the route is there already (sandbox.lua's pool_fallback)
    local set = assert(core.netns_listen(path, {}, 1))
    assert.are.equal("accepted\n", connect(path, "198.18.0.9", 80))
    set:close()
  end)

  it("leaves nothing open when a socket cannot be bound, and says which", function()
    if not root then return pending("needs root (CAP_SYS_ADMIN)") end
    local path = dir .. "/ns"
    assert.is_true(core.netns_make(path))
    local held = assert(core.netns_listen(path, { "tcp:127.0.0.1:8080" }))
    local before = open_fds()
    local set, err = core.netns_listen(path, { "udp:127.0.0.1:53", "tcp:127.0.0.1:8080" })
    assert.is_nil(set)
    assert.are.equal("cannot bind 'tcp:127.0.0.1:8080': Address already in use", err)
    set, err = core.netns_listen(path, { "tcp:localhost:80" })
    assert.is_nil(set)
    assert.are.equal("cannot bind 'tcp:localhost:80': expected tcp:A.B.C.D:PORT or udp:A.B.C.D:PORT", err)
    set, err = core.netns_listen(dir .. "/none", { "tcp:127.0.0.1:80" })
    assert.is_nil(set)
    assert.truthy(err:match("^cannot enter the namespace"))
    assert.are.equal(before, open_fds())
    -- the udp socket of the failed call is gone with it
    assert.is_nil(core.netns_read(path, { "udp" }).udp:match(":0035 "))
    assert.has_error(function() core.netns_read(path, { "../../self/environ" }) end)
    held:close()
  end)

  it("is swept when the process that made it is gone, and kept while it lives", function()
    if not root then return pending("needs root (CAP_SYS_ADMIN)") end
    local dead = dir .. "/" .. sandbox.NETNS_PREFIX .. "4194999-run-a"
    local live = dir .. "/" .. sandbox.NETNS_PREFIX .. core.getpid() .. "-run-b"
    local other = dir .. "/netns-x-run-c"
    for _, p in ipairs({ dead, live, other }) do assert.is_true(core.netns_make(p)) end
    local said = {}
    assert.are.equal(1, clean.sweep_netns(function(l) said[#said + 1] = l end, dir))
    assert.is_nil(core.stat(dead))
    assert.is_nil(mounted(dead))
    assert.are.equal("nsfs", mounted(live))
    assert.are.equal("nsfs", mounted(other))
    assert.are.same({ "removed the network namespace of a killed run " .. dead .. " (process 4194999 is gone)" }, said)
  end)
end)

describe("the topology of a run", function()
  local top
  before_each(function() top = assert(core.tmpdir("lb-netns-topo-")) end)
  after_each(function() core.rmtree(top) end)

  local function new_run(rootful)
    local scenario = { name = "ns", prompt = "hi", files = {}, env = {}, settings = {}, secrets = {}, setup = {},
                       model = lb.script { lb.say("ok") }, home = {} }
    local sb = sandbox.new { scenario = scenario, dir = top .. "/run", run_id = "0123456789ab-run",
                             images = { proxy = "p", claude = "c", subject = "s" }, model = "m", timeout = 60 }
    sb.pm = podman.new { podman = "/bin/false", runtime = "", rootful = rootful, seccomp = false }
    for k, v in pairs { project = "project", config = "claude-config", subject_dir = "subject", gate = "gate",
                        etc = "etc", trapca = "trap-ca", cadir = "ca", init_dir = "init", ctrdir = "containers",
                        records = "records", sock = "sock", uplogs = "upstream-logs", egress = "egress",
                        trapkeep = "trap-keep" } do
      sb[k] = sb.dir .. "/" .. v
      assert(core.mkdir_p(sb[k], 493))
    end
    return sb
  end

  it("puts claude and its sidecar in one namespace by path, both with its sysctls, removed in one wave", function()
    local sb = new_run(true)
    sb.netns = top .. "/netns-1-x"
    local t = sb:topology()
    assert.are.equal("ns:" .. sb.netns, t.net.network)
    assert.are.equal("ns:" .. sb.netns, t.claude.network)
    assert.is_nil(t.claude.join)
    -- whichever starts last sets them: the same either way
    assert.are.same(sandbox.NET_SYSCTLS, t.net.sysctls)
    assert.are.same(sandbox.NET_SYSCTLS, t.claude.sysctls)
    assert.are.same({ "net.ipv4.ip_unprivileged_port_start", "0" }, sandbox.NET_SYSCTLS[1])
    assert.are.same({ "net.ipv4.ping_group_range", "1000 1000" }, sandbox.NET_SYSCTLS[2])
    sb.topo = t
    assert.are.same({ { t.net.name, t.claude.name } }, sb:removal_waves({ t.net.name, t.claude.name }))
    -- the same, as podman is asked
    local g = sb.pm:create_spec(t.claude)
    assert.are.same({ nsmode = "path", value = sb.netns }, g.netns)
    assert.are.same({ ["net.ipv4.ip_unprivileged_port_start"] = "0", ["net.ipv4.ping_group_range"] = "1000 1000" },
      g.sysctl)
  end)

  it("has claude join its sidecar's namespace otherwise, which goes after it", function()
    local sb = new_run(false)
    sb.netns = false
    local t = sb:topology()
    assert.are.equal("none", t.net.network)
    assert.are.equal(t.net.name, t.claude.join)
    assert.is_nil(t.claude.network)
    assert.is_nil(t.claude.sysctls)
    sb.topo = t
    assert.are.same({ { t.claude.name }, { t.net.name } }, sb:removal_waves({ t.net.name, t.claude.name }))
  end)

  it("holds the namespace's sockets for the suite's upstream, with no sidecar, only when it may", function()
    if not root then return pending("needs root (CAP_SYS_ADMIN)") end
    if sh("command -v nft").status ~= 0 then return pending("needs nft (nftables) on the host") end
    local function held_run(fields)
      local sb = new_run(true)
      sb.pool = top .. "/pool"
      assert(core.mkdir_p(sb.pool .. "/runs", 493))
      assert(core.write_file(sb.trapkeep .. "/secrets.hex", "41424344\n", 384))
      for k, v in pairs(fields or {}) do sb[k] = v end
      sb:make_netns()
      sb:hold_sockets()
      return sb
    end
    local sb = held_run()
    finally(function() if sb.held then sb.held:close() end sb:drop_netns() end)
    assert.truthy(sb.held, sb.sidecar_why)
    -- the bridge's port, the trap's three, the simulated internet's three
    assert.are.equal(7, #sb.held:list())
    local t = sb:topology()
    assert.is_nil(t.net)
    assert.are.same({ "claude" }, { t[1].role })
    assert.are.equal("ns:" .. sb.netns, t.claude.network)
    assert.are.same(sandbox.NET_SYSCTLS, t.claude.sysctls)
    -- the trap's folder in the pool: its records, its CA, the run's secrets
    local p = sb.pool .. "/runs/" .. sb.run_id .. sandbox.TRAP_SUFFIX
    assert.are.equal(p, sb.trap_run)
    assert.are.equal(p .. "/trap-ca", sb.trapca)
    assert.are.equal("41424344\n", core.read_file(p .. "/keep/secrets.hex"))
    for _, sub in ipairs({ "logs", "egress", "trap-ca", "keep" }) do
      assert.are.equal(1000, core.stat(p .. "/" .. sub).uid, sub)
    end
    sb.held:close()
    sb:drop_netns()
    -- a sidecar otherwise: an interceptor, --live, no pool, or asked for
    for what, fields in pairs { live = { live = true }, ["no pool"] = { pool = false },
                                interceptor = { interceptor = function() return { port = 1 } end } } do
      local o = held_run(fields)
      assert.is_nil(o.held, what)
      o:drop_netns()
    end
    local getenv = os.getenv
    -- luacheck: ignore 122 (os.getenv stands in for the environment here)
    os.getenv = function(k) if k == sandbox.SIDECAR_ENV then return "1" end return getenv(k) end
    local ok, o = pcall(held_run)
    os.getenv = getenv -- luacheck: ignore 122
    assert(ok, o)
    assert.is_nil(o.held)
    assert.truthy(o:topology().net)
    o:drop_netns()
  end)

  it("makes the namespace only rootful, unless LEAKBENCH_NETNS=0, named by the process and the run", function()
    local sb = new_run(false)
    sb:make_netns()
    assert.is_false(sb.netns)
    if not root then return pending("needs root (CAP_SYS_ADMIN)") end
    sb = new_run(true)
    local getenv = os.getenv
    -- luacheck: ignore 122 (os.getenv stands in for the environment here)
    os.getenv = function(k) if k == sandbox.NETNS_ENV then return "0" end return getenv(k) end
    local ok, err = pcall(sb.make_netns, sb)
    os.getenv = getenv -- luacheck: ignore 122
    assert(ok, err)
    assert.is_false(sb.netns)
    sb = new_run(true)
    sb:make_netns()
    assert.are.equal(("%s/%s%d-%s"):format(podman.conmon_base(), sandbox.NETNS_PREFIX, core.getpid(), sb.run_id),
      sb.netns)
    assert.are.equal("nsfs", mounted(sb.netns))
    local path = sb.netns
    sb:drop_netns()
    assert.is_nil(sb.netns)
    assert.is_nil(core.stat(path))
  end)
end)

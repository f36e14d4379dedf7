-- One isolated run: a scenario, optionally a subject, in containers.
--
-- Topology (docs/ARCHITECTURE.md; README, "How a run is sealed"): no podman network is
-- created. Every container has loopback only (--network none), except the
-- upstream in --live mode. Each hop is a Unix socket in a directory of the
-- run, mounted only into the two containers it joins:
--
--   claude ──(netns of "net")── lb-net 127.0.0.1:8080 ─┐
--                                                       │ sock/icp/api.sock
--   icp ─────(netns of "icpnet")── lb-net ─────────────┘ (only with an
--        127.0.0.1:9090 ──────────────────────────────┐   interceptor)
--                                                       │ sock/up/api.sock
--   up: lb-proxy (records) ── /tmp/model.sock ── lb-model (offline), or the
--       real API (--live, the one container with a route out)
--
-- "net" and "icpnet" are sidecars of our servers image that own the network
-- namespace the claude and interceptor containers join (--network
-- container:NAME): they share no files and no processes with them, so the
-- agent can neither stop the bridge nor reach what it records. Without an
-- interceptor, net's bridge goes straight to sock/up. Nothing is addressed
-- by name, so nothing needs DNS or depends on netavark or CNI.
--
-- Rootful, with the suite's upstream and no interceptor, there is no
-- "net": the run binds claude's namespace's sockets from the host and
-- hands them to the suite's upstream (Sandbox:hold_sockets), which
-- serves the bridge beside the run's proxy and the trap in a child of
-- its own; the claude container is the run's only one.
--
-- The topology is data: Sandbox:topology() describes each container as a
-- container spec (image, mounts, env, limits, labels, the netns it joins,
-- its readiness lines), and podman.lua alone turns a spec into a `podman
-- run` argv (pm:run_argv) or a create request to the suite's podman
-- service (pm:create_spec), with the hardening (podman.HARDENING) and the
-- labels (podman.labels) written once. `leakbench doctor` starts the same
-- table in trial mode (Sandbox:trial).
--
-- Everything the run creates carries the labels leakbench=1,
-- leakbench.run=<run id>, leakbench.suite=<suite id>, leakbench.pid=<our
-- pid>. Whatever happens (success, timeout, error, SIGINT, SIGTERM) the
-- finally step collects the logs, removes every container and socket of the
-- run, and the artifacts stay in the run directory.
local json = require "leakbench.json"
local cjson = require "cjson"
local core = require "leakbench.core"
local defaults = require "leakbench.defaults"
local lb = require "leakbench"
local auth = require "leakbench.auth"
local podman = require "leakbench.podman"
local images = require "leakbench.images"
local watch = require "leakbench.watch"
local loader = require "leakbench.loader"
local printable = require "leakbench.printable"
local tree = require "leakbench.tree"
local trace = require "leakbench.trace"

local M = {}

local UID = 1000
local API_PORT = 8080        -- Claude Code's ANTHROPIC_BASE_URL, in its netns
local UPSTREAM_PORT = 9090   -- the interceptor's UPSTREAM_URL, in its netns
local TRAP_PROXY = "http://127.0.0.1:3128"   -- lb-trap's HTTP proxy, claude's netns
local CA_DIR = "/etc/leakbench-ca"           -- the trap's CA, in the claude container
-- What the trap writes to trap-ca/ (the CA, and the system CAs with it),
-- and the most of each that is copied.
local CA_FILES = { "ca.pem", "bundle.pem" }
M.CA_FILE_CAP = 4 << 20
-- Where lb-net hands the simulated internet (every TCP connection and UDP
-- datagram to 198.18.0.0/15, local to claude's netns) to the trap.
M.SIM_PORT = 1
local READY_TIMEOUT = 30
-- What the proxy may record per run (wire.jsonl + responses/): below what
-- the evidence reader scans per file (evidence.FILE_CAP), so that every
-- recorded byte is scanned; a run that needs more ends as an error.
M.RECORD_BYTES = "192M"
-- The most of one record file moved out of the suite's upstream by a copy
-- (Sandbox:pool_done, where a rename cannot): evidence.FILE_CAP.
M.RECORD_FILE_CAP = 256 << 20

-- Resources of each container of a run (issue: a hostile interceptor or
-- agent must not take the host down). tmpfs sizes cap what /tmp can hold.
M.LIMITS = {
  claude = { memory = "4g", pids = 1024, tmp = "1g", home = "512m", cpus = 2,
             project = "1g", config = "1g" },
  up     = { memory = "1g", pids = 128, tmp = "64m", cpus = 1 },
  net    = { memory = "256m", pids = 128, tmp = "16m", cpus = 1 },
  icp    = { memory = "1g", pids = 256, tmp = "256m", cpus = 1 },
  setup  = { memory = "2g", pids = 512, tmp = "512m", home = "256m", cpus = 2 },
}
local GATE = "/run/leakbench-gate"

-- The claude container is created while the upstream starts, and waits
-- for the gate file before it becomes Claude Code, so that creating it
-- (the slowest podman step) overlaps everything before it. The wait is
-- bounded: a run whose harness vanished ends by itself.
--
-- Its PID 1 is lb-init (src/init/main.c), from the servers image (a host
-- copy of its files, images.init_copy, bind-mounted read-only at
-- INIT_ROOT): it waits at the gate, runs Claude Code with its stdout and
-- stderr on sockets only lb-init holds, and relays them to the
-- container's (stream.jsonl and stderr.txt). lb-init is not dumpable and
-- lb-nodump.so makes Claude Code not dumpable either, so no tool the agent
-- runs can open their descriptors (/proc/1/fd/1 was stream.jsonl when
-- Claude Code was PID 1), read their memory or trace them.
local INIT_ROOT = images.INIT_ROOT
M.INIT = INIT_ROOT .. "/usr/local/bin/lb-init"
M.NODUMP = INIT_ROOT .. "/usr/local/lib/leakbench/lb-nodump.so"

-- The upstream container, offline: lb-net supervises the scripted model,
-- on a socket of its own (in the container's /tmp, mounted nowhere else),
-- and the proxy, started once the model's socket accepts. When either
-- ends, at any time, lb-net says which and how ("lb-net: 'lb-model' was
-- killed by signal 9") and ends the container, which the harness sees as
-- a dead carrier (Sandbox:dead_carrier): the run is an error naming it.
--
-- In the suite's upstream container (M.pool_spec), the same programs, one
-- lb-net and its pair per run, on that run's folder (AT: /runs/<run id>)
-- and a model socket in its own /tmp/<run id>.
-- With BRIDGE_FD, lb-net also bridges that descriptor (the API port of
-- the run's namespace, Sandbox:hold_sockets) to the proxy's socket.
local function upstream_offline(record_bytes, at, bridge_fd)
  local p = at and { script = at .. "/script.json", logs = at .. "/logs", sock = at .. "/sock",
                     records = at .. "/records", model = "/tmp/" .. at:match("[^/]+$") .. "/model.sock" }
    or { script = "/script/script.json", logs = "/logs", sock = "/sock/up", records = "/records",
         model = "/tmp/model.sock" }
  local argv = { "lb-net", "--",
    "lb-model", "--script", p.script, "--listen", "unix:" .. p.model,
    "--log", p.logs .. "/model.log",
    "--once", "unix:" .. p.model,
    "lb-proxy", "--listen", "unix:" .. p.sock .. "/api.sock", "--upstream", "http://lb-model",
    "--upstream-socket", p.model, "--records", p.records,
    "--max-record-bytes", tostring(record_bytes) }
  if bridge_fd then
    table.insert(argv, 2, "--bridge")
    table.insert(argv, 3, ("fd:%d=unix:%s/api.sock"):format(bridge_fd, p.sock))
  end
  return argv
end

-- The suite's upstream container (issue 26: a run costs one container
-- fewer): `lb-net --pool` (src/net/pool.h), started by the runner for
-- the offline runs of a suite through its podman service, with loopback
-- only, holds every run's model and proxy, each pair in its own process
-- group on the run's own folder of POOL/runs, which only it and that
-- run's network sidecar (its sock/, as sock/up) mount. The runner hands
-- its folder to the runs in M.POOL_ENV; each run asks for its pair over
-- POOL/ctl/pool.sock, a folder no other container mounts.
M.POOL_ENV = "LEAKBENCH_UPSTREAM_POOL"
M.POOL_PREFIX = "pool-"
M.POOL_CTL = "/ctl/pool.sock"
-- "1" for the suite's last run (the runner starts no other after it).
-- Nothing starts after it for its end to overlap, so it ends what it can
-- while it scans its evidence: its DELETE of its programs ends the pool
-- once no run is left in it (src/net/pool.h), so that the runner removes
-- a container that has ended instead of killing it first; and it removes
-- its own containers that have ended (Sandbox:await_removal), instead of
-- leaving them to the runner (podman.DEFER_ENV).
M.LAST_RUN_ENV = "LEAKBENCH_LAST_RUN"

--- M.pool_end(pool, id, [final]) -> the pool's HTTP status, or nil. The
--- pool's program ID (a run's pair: its run id; its trap: run id ..
--- TRAP_SUFFIX) killed and reaped: DELETE /runs/ID over POOL's control
--- socket (a 404 when it has none), traced. FINAL: the suite's last run
--- says so (?final), and the pool ends once it holds no run.
function M.pool_end(pool, id, final)
  local path = "/runs/" .. id .. (final and "?final" or "")
  local done = trace.begin("api", "DELETE pool " .. path)
  local status = core.uhttp(pool .. M.POOL_CTL, "DELETE", path, nil, 10)
  done { status = status }
  return status
end

--- M.pool_spec(o) -> the container spec of the suite's upstream: o.dir
--- (the pool folder), o.name, o.image (the servers image), o.labels,
--- o.lifetime, o.runs (how many at once: its limits are those of a run's
--- upstream and network sidecar, M.LIMITS.up's and .net's, whose trap
--- and bridge it may hold instead, times that).
function M.pool_spec(o)
  local up, net, n = M.LIMITS.up, M.LIMITS.net, math.max(1, o.runs)
  local function mib(k) return ((M.size_bytes(up[k]) + M.size_bytes(net[k])) * n >> 20) .. "m" end
  return { name = o.name, role = "pool", image = o.image, network = "none", detach = true,
    labels = o.labels, lifetime = o.lifetime, log = { dir = o.dir, name = "pool" },
    limits = { memory = mib("memory"), pids = (up.pids + net.pids) * n + 16, tmp = mib("tmp"),
               cpus = math.min(n, core.ncpu()) },
    mounts = { { o.dir .. "/runs", "/runs" }, { o.dir .. "/ctl", "/ctl" } },
    command = { "lb-net", "--pool", "unix:" .. M.POOL_CTL, "--runs", "/runs" },
    ready = { { "lb-net: pool listening", "suite's upstream" } } }
end

-- Environment for Claude Code that stops traffic the run does not need.
local QUIET_ENV = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = "1",
  DISABLE_AUTOUPDATER = "1",
  DISABLE_ERROR_REPORTING = "1",
  DISABLE_TELEMETRY = "1",
}

local function json_encode(v)
  return json.encode(v)
end

local function append(t, ...)
  for _, list in ipairs({ ... }) do
    for _, v in ipairs(list) do t[#t + 1] = v end
  end
  return t
end

-- Whether every one of LIST is a key of SET.
local function all_in(list, set)
  for _, v in ipairs(list) do
    if not set[v] then return false end
  end
  return true
end

-- Deep merge of Claude Code settings: tables merge key by key, lists
-- concatenate (hooks and permission rules of the scenario and the subject
-- both apply), scalars from B win.
local function is_list(t)
  if type(t) ~= "table" then return false end
  local n = 0
  for _ in pairs(t) do n = n + 1 end
  return n == #t and n > 0
end

function M.merge_settings(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then
    if b == nil then return a end
    return b
  end
  if is_list(a) and is_list(b) then
    local out = {}
    for _, v in ipairs(a) do out[#out + 1] = v end
    for _, v in ipairs(b) do out[#out + 1] = v end
    return out
  end
  local out = {}
  for k, v in pairs(a) do out[k] = v end
  for k, v in pairs(b) do out[k] = M.merge_settings(out[k], v) end
  return out
end

-- The MCP servers of a run: the scenario's (a leak path it brings), then
-- the subject's (a guard it adds); a name both declare is the subject's.
-- Returns the map name -> { command, args, env }, possibly empty.
function M.mcp_servers(scenario, subject)
  local out = {}
  for _, src in ipairs({ scenario and scenario.mcp, subject and subject.mcp }) do
    for name, def in pairs(src and src.servers or {}) do out[name] = def end
  end
  return out
end

-- The text of the --mcp-config file for SERVERS (M.mcp_servers), or nil
-- when there are none: {"mcpServers": {NAME: {"type": "stdio", "command",
-- "args", "env"}}}, names sorted so the file is the same every time.
function M.mcp_config(servers)
  local names = {}
  for k in pairs(servers) do names[#names + 1] = k end
  if #names == 0 then return nil end
  table.sort(names)
  local parts = {}
  for _, name in ipairs(names) do
    local d = servers[name]
    local env = next(d.env or {}) and json.encode(d.env) or "{}"
    parts[#parts + 1] = string.format('%s:{"type":"stdio","command":%s,"args":%s,"env":%s}',
      json.encode(name), json.encode(d.command), json.encode(json.array(d.args or {})), env)
  end
  return '{"mcpServers":{' .. table.concat(parts, ",") .. "}}\n"
end
M.MCP_CONFIG = "/opt/subject/mcp.json"

-- The permission mode of a run: the subject's, else the scenario's, else
-- bypassPermissions (loader.DEFAULT_PERMISSION_MODE: nobody answers a
-- prompt in a headless run; see README, "Permission modes").
function M.permission_mode(scenario, subject)
  return subject and subject.permission_mode or scenario.permission_mode
    or loader.DEFAULT_PERMISSION_MODE
end

-- The arguments of Claude Code inside the container (the seed's
-- claude_args); the program itself is the container's entrypoint.
-- SUBJECT (or nil) adds a --plugin-dir per plugin and its claude_args;
-- MCP: whether an --mcp-config file is staged. --strict-mcp-config stays
-- in every case: only the servers the run declares ever start.
function M.claude_argv(scenario, session_id, model, subject, mcp)
  local argv = {
    "-p", scenario.prompt,
    "--session-id", session_id,
    "--model", model,
    "--output-format", "stream-json",
    "--verbose",
    "--permission-mode", M.permission_mode(scenario, subject),
    "--setting-sources", subject and subject.agent and subject.agent.user_config and "user,project"
      or "project",
    "--settings", "/opt/subject/settings.json",
    "--strict-mcp-config",
  }
  if mcp then append(argv, { "--mcp-config", M.MCP_CONFIG }) end
  for _, dir in ipairs(subject and subject.plugins or {}) do
    append(argv, { "--plugin-dir", dir })
  end
  if scenario.max_turns then
    argv[#argv + 1] = "--max-turns"
    argv[#argv + 1] = tostring(scenario.max_turns)
  end
  for _, a in ipairs(scenario.claude_args or {}) do argv[#argv + 1] = a end
  for _, a in ipairs(subject and subject.claude_args or {}) do argv[#argv + 1] = a end
  return argv
end

-- What a user settings file from an agent layer's installer may not
-- change (agent.user_config): the variables that route the run's evidence
-- and carry its credential, whatever Claude Code would read them from.
-- Its env loses these names (and every ANTHROPIC_* and CLAUDE_CODE_* one:
-- base URLs, providers, tokens), and the settings lose the helpers that
-- hand Claude Code a credential of their own.
M.HARNESS_ENV = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
  "all_proxy", "no_proxy", "SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "GIT_SSL_CAINFO",
  "NODE_EXTRA_CA_CERTS", "CLAUDE_CONFIG_DIR", "HOME", "DISABLE_AUTOUPDATER", "DISABLE_ERROR_REPORTING",
  "DISABLE_TELEMETRY" }
local CREDENTIAL_HELPERS = { "apiKeyHelper", "awsCredentialExport", "awsAuthRefresh", "otelHeadersHelper" }

-- The text of a user settings file with the harness's variables taken
-- out (M.HARNESS_ENV), and the list of what was removed; nil, msg when
-- TEXT is not a JSON object.
function M.user_settings(text)
  local ok, doc = pcall(cjson.decode, text)
  if not ok or type(doc) ~= "table" then return nil, "its settings.json is not a JSON object" end
  local removed, harness = {}, {}
  for _, k in ipairs(M.HARNESS_ENV) do harness[k] = true end
  if type(doc.env) == "table" then
    local names = {}
    for k in pairs(doc.env) do names[#names + 1] = tostring(k) end
    table.sort(names)
    for _, k in ipairs(names) do
      if harness[k] or k:match("^ANTHROPIC_") or k:match("^CLAUDE_CODE_") then
        doc.env[k] = nil
        removed[#removed + 1] = "env." .. k
      end
    end
  end
  for _, k in ipairs(CREDENTIAL_HELPERS) do
    if doc[k] ~= nil then
      doc[k] = nil
      removed[#removed + 1] = k
    end
  end
  -- Unchanged bytes when nothing was removed (cjson cannot tell an empty
  -- list from an empty object, so a rewrite could change a type).
  if #removed == 0 then return text, removed end
  return json_encode(doc), removed
end

-- Writes the files of a map (path = string | lb.file) under DIR.
local function stage_files(dir, files)
  local names = {}
  for k in pairs(files) do names[#names + 1] = k end
  table.sort(names)
  for _, rel in ipairs(names) do
    local v = files[rel]
    local path = dir .. "/" .. rel
    local parent = path:match("^(.*)/[^/]*$")
    assert(core.mkdir_p(parent, 493))
    if lb.is(v, lb.FILE) then
      assert(core.write_file(path, v.data, v.mode & 511))
    else
      assert(core.write_file(path, v, 420))
    end
  end
end

local Sandbox = {}
Sandbox.__index = Sandbox

M.CLAUDE_SERVICE_ENV = "LEAKBENCH_PODMAN_SERVICE_CLAUDE"

-- new(opts): opts.scenario, opts.subject (or nil), opts.dir (the run's
-- artifact directory, created by the caller; made absolute here, since
-- podman reads a relative -v source as a volume name), opts.images
-- {claude=, proxy=, subject=}, opts.pm (leakbench.podman object),
-- opts.run_id, opts.suite_id, opts.live, opts.model, opts.timeout,
-- opts.keep_transcripts.
function M.new(opts)
  local self = setmetatable({}, Sandbox)
  for k, v in pairs(opts) do self[k] = v end
  self.dir = core.realpath(self.dir) or self.dir
  self.tag = self.run_id:sub(1, 12)
  self.names = {
    up = "lb-" .. self.tag .. "-up",
    net = "lb-" .. self.tag .. "-net",
    icpnet = "lb-" .. self.tag .. "-icpnet",
    icp = "lb-" .. self.tag .. "-icp",
    claude = "lb-" .. self.tag .. "-claude",
    setup = "lb-" .. self.tag .. "-setup",
  }
  self.timings = {}
  self.session_id = core.uuid()
  -- The suite's podman service (runner.lua), when there is one: detached
  -- containers are created and removed through it, not by the CLI.
  local sock = os.getenv(podman.SOCKET_ENV)
  if sock and sock ~= "" then self.api = podman.client(sock) end
  -- The claude container through it too, unless M.CLAUDE_SERVICE_ENV=0
  -- (then by an attached `podman run`, as without a service). Its starts
  -- that once failed under load (1 in about 25, runc: "error mounting
  -- .../userdata/overlay/.../merge to rootfs at /opt/leakbench") were
  -- lb-init's image mount's, since replaced by a bind of a host copy
  -- (images.init_copy)
  self.api_claude = self.api and os.getenv(M.CLAUDE_SERVICE_ENV) ~= "0" or nil
  -- The suite's upstream container (M.pool_spec), for an offline run.
  local pool = os.getenv(M.POOL_ENV)
  if pool and pool ~= "" and not self.live then self.pool = pool end
  return self
end

-- The labels of everything the run creates (podman.labels): leakbench=1,
-- the run, the suite and this process.
function Sandbox:labels()
  return podman.labels { run = self.run_id, suite = self.suite_id or self.run_id }
end

-- How long any container of the run may live, whoever watches it
-- (defaults.container_lifetime): every container spec of the run has it.
function Sandbox:lifetime()
  return defaults.container_lifetime(self.timeout)
end

-- podman(argv, opts) -> result or raises {stage=, msg=}.
function Sandbox:podman(argv, opts)
  local r, err = self.pm:podman(argv, opts)
  if not r then error({ run_error = true, msg = err }, 0) end
  return r
end

function Sandbox:fail(fmt, ...)
  error({ run_error = true, msg = string.format(fmt, ...) }, 0)
end

-- The CPU time the whole machine has spent (every process: podman,
-- conmon, runc, the containers), in seconds, from /proc/stat's first line
-- (user, nice, system, irq, softirq; in USER_HZ, 100 a second); nil where
-- it cannot be read. Per phase in timings.<phase>_cpu, for bench_runner:
-- it means something on a quiet machine, one run at a time.
function M.machine_cpu()
  local f = io.open("/proc/stat")
  if not f then return nil end
  local line = f:read("l")
  f:close()
  local v = {}
  for n in (line or ""):gmatch("%d+") do v[#v + 1] = tonumber(n) end
  if #v < 7 then return nil end
  return (v[1] + v[2] + v[3] + v[6] + v[7]) / 100
end

function Sandbox:phase(name, fn)
  local t0, c0 = core.now(), M.machine_cpu()
  local done = trace.begin("phase", name)
  local ok, err = pcall(fn)
  done { ok = ok }
  self.timings[name] = core.now() - t0
  local c1 = M.machine_cpu()
  if c0 and c1 then self.timings[name .. "_cpu"] = c1 - c0 end
  if not ok then error(err, 0) end
end

function Sandbox:check_interrupted()
  local sig = core.interrupted()
  if sig then error({ run_error = true, interrupted = sig, msg = "interrupted by " .. sig }, 0) end
end

function Sandbox:interceptor()
  return self.subject and self.subject.interceptor
end

-- Where the run folder is while the run is on. The claude container's
-- mount table (/proc/self/mountinfo) shows the source path of each bind
-- mount, so for the run the folder moves to a neutral path,
-- HIDE_BASE-<uid>/<run id> (a directory of ours alone, mode 0700), with a
-- link at its own path; it moves back when the run ends (Sandbox:unhide_dir).
-- A rename only: where the two are on different file systems, or the
-- base is not ours alone, the run stays where it is, and its path shows.
-- The folder is named <pid>-<run id> there, and <pid>-<run id>.from holds
-- its own path, so that `leakbench clean` can move back the folder of a
-- run whose process was killed (clean.sweep_hidden).
M.HIDE_BASE = "/var/tmp/leakbench"

function M.hide_base()
  return ("%s-%d"):format(M.HIDE_BASE, core.getuid())
end

function Sandbox:hide_dir()
  local base = M.hide_base()
  core.mkdir_p(base, 448)
  local st = core.stat(base)
  if not (st and st.type == "dir" and st.uid == core.getuid() and st.mode & 63 == 0) then return end
  local hidden = ("%s/%d-%s"):format(base, core.getpid(), self.run_id)
  if not core.write_file(hidden .. ".from", self.dir, 384) then return end
  if not os.rename(self.dir, hidden) then
    os.remove(hidden .. ".from")
    return
  end
  if not core.symlink(hidden, self.dir) then
    os.rename(hidden, self.dir)
    os.remove(hidden .. ".from")
    return
  end
  self.shown_dir, self.dir = self.dir, hidden
end

-- The run folder back at its own path (where the link was).
function Sandbox:unhide_dir()
  local shown = self.shown_dir
  if not shown then return end
  local st = core.stat(shown)
  if st and st.type == "link" and os.remove(shown) then
    if os.rename(self.dir, shown) then
      os.remove(self.dir .. ".from")
      self.dir, self.shown_dir = shown, nil
    else
      core.symlink(self.dir, shown)
    end
  end
end

-- Stage: project, home files, claude config, subject dir, script, records,
-- the socket directories and the agent's resolv.conf and hosts.
function Sandbox:stage()
  local d = self.dir
  self.project = d .. "/project"
  self.config = d .. "/claude-config"
  self.records = d .. "/records"
  self.subject_dir = d .. "/subject"
  self.ctrdir = d .. "/containers"
  self.gate = d .. "/gate"
  self.sock = d .. "/sock"
  self.uplogs = d .. "/upstream-logs"
  self.etc = d .. "/etc"
  self.egress = d .. "/egress"
  self.trapca = d .. "/trap-ca"
  self.cadir = d .. "/ca"
  self.trapkeep = d .. "/trap-keep"
  local dirs = { self.project, self.config, self.records, self.subject_dir,
                 self.ctrdir, self.gate, self.sock .. "/up", self.uplogs, self.etc,
                 self.egress, self.trapca, self.cadir, self.trapkeep }
  if self:interceptor() then dirs[#dirs + 1] = self.sock .. "/icp" end
  -- the transcript's folder, there before Claude Code: the watcher
  -- (watch.lua) watches it from its first wait, and sees the transcript
  -- the moment Claude Code makes it
  dirs[#dirs + 1] = self.config .. "/projects/-work"
  for _, p in ipairs(dirs) do
    assert(core.mkdir_p(p, 493))
  end
  -- The trap's CA files, empty until Sandbox:take_trap_ca writes them over
  -- in place: the claude container mounts one as a file, and is created
  -- before the trap has written them.
  for _, name in ipairs(CA_FILES) do assert(core.write_file(self.cadir .. "/" .. name, "", 420)) end
  stage_files(self.project, self.scenario.files)
  if next(self.scenario.home) then
    self.home_dir = d .. "/home"
    stage_files(self.home_dir, self.scenario.home)
  end
  -- lb-init's files, one host copy per servers image (images.init_copy)
  local init_dir, ierr = images.init_copy(self.pm, self.images.proxy, M.hide_base())
  if not init_dir then self:fail("%s", ierr) end
  self.init_dir = init_dir
  local cache = auth.feature_cache(os.getenv, core.read_file)
  self:stage_user_config(cache)
  assert(core.write_file(self.config .. "/.claude.json",
    next(cache) and json_encode(cache) or "{}", 384))
  local subject = self.subject
  local settings = M.merge_settings(self.scenario.settings, subject and subject.settings or {})
  local text = next(settings) and json_encode(settings) or "{}"
  if subject then stage_files(self.subject_dir, subject.files) end
  assert(core.write_file(self.subject_dir .. "/settings.json", text, 420))
  local mcp = M.mcp_config(M.mcp_servers(self.scenario, subject))
  if mcp then
    assert(core.write_file(self.subject_dir .. "/mcp.json", mcp, 420))
    self.mcp = true
  end
  assert(core.write_file(d .. "/settings.json", text, 420))
  self:stage_trap_secrets()
  -- Name lookups go to loopback only, where the trap answers them.
  assert(core.write_file(self.etc .. "/resolv.conf",
    "nameserver 127.0.0.1\noptions ndots:0 attempts:1\n", 420))
  assert(core.write_file(self.etc .. "/hosts",
    "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n", 420))
  if not self.live then
    if not self.scenario.model then
      self:fail("scenario '%s' has no model script: it can only run with --live", self.scenario.name)
    end
    assert(core.write_file(d .. "/script.json", lb.script_json(self.scenario.model,
      subject and subject.model_replies), 420))
  end
  if self.pool then self:stage_pool() end
  -- Rootful podman runs the containers as uid 1000 without a user
  -- namespace: give it what it must write.
  if self.pm.rootful then
    for _, p in ipairs({ self.project, self.config, self.records, self.sock, self.uplogs,
                         self.egress, self.trapca, self.trapkeep }) do
      assert(core.chown(p, UID, UID, true))
    end
  end
end

-- The run's secrets, for the trap alone (mounted in claude's network
-- sidecar, never in the claude container): past its record caps it still
-- records an attempt that holds one. One per line, in hex.
function Sandbox:stage_trap_secrets()
  local hex = {}
  for _, sec in ipairs(self.scenario.secrets or {}) do
    if type(sec) == "string" and #sec >= 8 then
      hex[#hex + 1] = (sec:gsub(".", function(c) return ("%02x"):format(c:byte()) end))
    end
  end
  assert(core.write_file(self.trapkeep .. "/secrets.hex", table.concat(hex, "\n") .. "\n", 384))
end

-- The run's folder in the suite's upstream (M.pool_spec): the script, and
-- the folders its proxy and model write (records/, logs/) and its proxy's
-- socket (sock/), which take the places of records/, upstream-logs/ and
-- sock/up in the run folder until Sandbox:pool_done.
function Sandbox:stage_pool()
  local p = self.pool .. "/runs/" .. self.run_id
  self.pool_run = p
  for _, sub in ipairs({ "logs", "records", "sock" }) do assert(core.mkdir_p(p .. "/" .. sub, 493)) end
  assert(core.write_file(p .. "/script.json", assert(core.read_file(self.dir .. "/script.json")), 420))
  self.own_folders = { self.records, self.uplogs }
  self.records, self.uplogs = p .. "/records", p .. "/logs"
  if self.pm.rootful then
    for _, sub in ipairs({ "logs", "records", "sock" }) do assert(core.chown(p .. "/" .. sub, UID, UID)) end
  end
end

-- The host folder of socket folder NAME (sock/NAME, mounted as /sock/NAME).
function Sandbox:sock_dir(name)
  if name == "up" and self.pool_run then return self.pool_run .. "/sock" end
  return self.sock .. "/" .. name
end

-- The agent layer's user config (images.user_config, a host copy of what
-- its installer left in /home/bench/.claude) becomes the start of the
-- run's config dir: every regular file but projects/ (the run's own
-- transcripts) and links; settings.json without the harness's variables
-- (M.user_settings; what was removed goes to user-config.txt in the run
-- folder); .claude.json's keys merged into CACHE (the feature-flag cache's
-- own keys win). Raises a run error when the copy cannot be read.
function Sandbox:stage_user_config(cache)
  local src = self.images and self.images.user_config
  if not src then return end
  local removed = {}
  for _, rel in ipairs(tree.files(src)) do
    if not rel:match("^projects/") then
      local data = core.read_file(src .. "/" .. rel)
      if not data then self:fail("cannot read '%s' of the agent layer's user config", rel) end
      local st = core.stat(src .. "/" .. rel)
      if rel == ".claude.json" then
        local ok, doc = pcall(cjson.decode, data)
        if ok and type(doc) == "table" then
          for k, v in pairs(doc) do if cache[k] == nil then cache[k] = v end end
        end
      else
        if rel == "settings.json" then
          local text, what = M.user_settings(data)
          if not text then self:fail("the agent layer's user config: %s", what) end
          data, removed = text, what
        end
        assert(core.mkdir_p((self.config .. "/" .. rel):match("^(.*)/[^/]*$"), 493))
        assert(core.write_file(self.config .. "/" .. rel, data, st and (st.mode & 511) or 384))
      end
    end
  end
  if #removed > 0 then
    assert(core.write_file(self.dir .. "/user-config.txt", "removed from the installed settings.json "
      .. "(the harness's own):\n" .. table.concat(removed, "\n") .. "\n", 420))
  end
end

-- Where credential files of older versions lived (they handed the
-- credential to the proxy in a file); `leakbench clean` still sweeps such
-- leftovers. The credential now reaches the proxy on its standard input
-- only (Sandbox:start_network).
M.CREDENTIAL_PREFIX = "leakbench-cred-"
function M.credential_base()
  local base = os.getenv("XDG_RUNTIME_DIR")
  if not base or base == "" or not core.stat(base) then base = "/dev/shm" end
  return base
end

-- The real credential, for --live: kept in this process's memory until
-- the proxy has read it from its standard input.
function Sandbox:read_credential()
  local real, kind_or_err = auth.host(os.getenv, core.read_file)
  if not real then self:fail("%s", kind_or_err) end
  self.auth_kind = kind_or_err
  self.credential_line = real
  self.real_credential = real:match("^%a+:(.*)$")
end

-- Starts several containers at once (their specs, podman.run_argv):
-- through the service, created side by side, then started side by side
-- (svc:run_all); by the CLI, a podman run each, in parallel. Raises on
-- the first failure, after all have ended (nothing is left running
-- behind the error).
function Sandbox:podman_all(specs, during)
  if #specs == 0 then
    if during then during() end
    return
  end
  if self.api then
    local ok, err = self.api:run_all(self.pm, specs, during)
    if not ok then self:fail("%s", err) end
    self.timings.podman_api = (self.timings.podman_api or 0) + #specs
    return
  end
  local handles, argvs, spans = {}, {}, {}
  for i, spec in ipairs(specs) do
    argvs[i] = self.pm:run_argv(spec)
    spans[i] = trace.begin("cli", trace.podman(argvs[i]))
    local h, err = core.start({ argv = self.pm:argv(argvs[i]), timeout = self.pm.timeout })
    if not h then
      for _, o in ipairs(handles) do o:wait() end
      self:fail("%s", err)
    end
    handles[i] = h
  end
  local fine, raised = true, nil
  if during then fine, raised = pcall(during) end
  local failed
  for i, h in ipairs(handles) do
    local r = h:wait()
    spans[i] { status = r and r.status }
    local msg = r and podman.failure(argvs[i][1], r)
    if not r then msg = "podman " .. argvs[i][1] .. " did not end" end
    failed = failed or msg
  end
  if not fine then error(raised, 0) end
  if failed then self:fail("%s", failed) end
end

-- Creates and starts the container of SPEC through the suite's podman
-- service; raises a run error when it cannot. timings.podman_api counts
-- them (none: the run used the CLI only).
function Sandbox:api_run(spec)
  local ok, err = self.api:run(self.pm, spec)
  if not ok then self:fail("%s", err) end
  self.timings.podman_api = (self.timings.podman_api or 0) + 1
end

-- What every detached container of the run shares, as a container spec
-- (podman.run_argv): its name, the run's labels, its log (pm:log_args)
-- and its limits (M.LIMITS); FIELDS add to it.
function Sandbox:base_spec(short, fields)
  local spec = { name = self.names[short], role = short, labels = self:labels(), detach = true,
                 lifetime = self:lifetime(),
                 log = { dir = self.ctrdir, name = short },
                 limits = M.LIMITS[short == "icpnet" and "net" or short] }
  for k, v in pairs(fields) do spec[k] = v end
  return spec
end

-- Waits for every readiness line of container SHORT of the topology.
function Sandbox:await(short)
  local spec = self.topo[short]
  for _, r in ipairs(spec.ready) do
    local ok, logs, why = podman.wait_ready(self.ctrdir, short, r[1], READY_TIMEOUT)
    if not ok then
      self:check_interrupted()
      self:fail("%s container '%s' %s; its log:\n%s", r[2], spec.name,
        why == "exited" and "exited before it was ready"
          or ("did not start within " .. READY_TIMEOUT .. " s"),
        logs ~= "" and logs or "(empty)")
    end
  end
end

-- The scenario's limits over the defaults: the claude container's, and
-- the proxy's record bytes.
function Sandbox:claude_limits()
  local l, own = {}, self.scenario.limits or {}
  for k, v in pairs(M.LIMITS.claude) do l[k] = own[k] or v end
  return l
end

-- The kernel's cap on any one file the claude container's processes
-- write (RLIMIT_FSIZE): one byte past the smaller of limits.project and
-- limits.config, so that a single file can never pass its mount's cap
-- (the write fails at cap + 1 bytes, and Sandbox:over_size then stops the run).
-- What many files add up to is watched (Sandbox:over_size).
function Sandbox:fsize()
  local l = self:claude_limits()
  return math.min(M.size_bytes(l.project), M.size_bytes(l.config)) + 1
end

function Sandbox:record_bytes()
  return (self.scenario.limits or {}).record_bytes or M.RECORD_BYTES
end

-- The upstream container: the recording proxy on sock/up/api.sock, in
-- front of the scripted model (offline) or the real API (--live: the only
-- container with a route out, on podman's default network; the credential
-- arrives on its standard input, never in a file, env or argv).
function Sandbox:up_spec()
  local spec = self:base_spec("up", { detach = not self.live, image = self.images.proxy,
    ready = { { "lb-proxy: listening", "recording proxy" } },
    mounts = { { self.records, "/records" }, { self:sock_dir("up"), "/sock/up" } } })
  if not self.live then
    spec.network = "none"
    append(spec.mounts, { { self.dir .. "/script.json", "/script/script.json", ro = true },
      { self.uplogs, "/logs" } })
    spec.command = upstream_offline(self:record_bytes())
    return spec
  end
  local upstream = os.getenv("LEAKBENCH_UPSTREAM") or "https://api.anthropic.com"
  local proxy_args = { "lb-proxy", "--listen", "unix:/sock/up/api.sock", "--upstream", upstream,
    "--records", "/records", "--credential-file", "/dev/stdin", "--max-record-bytes", self:record_bytes() }
  spec.network, spec.stdin = "default", true
  local ca = os.getenv("LEAKBENCH_UPSTREAM_CA")
  if ca and ca ~= "" then
    append(spec.mounts, { { ca, "/run/upstream-ca.pem", ro = true } })
    append(proxy_args, { "--ca-file", "/run/upstream-ca.pem" })
  end
  spec.command = proxy_args
  return spec
end

-- The sysctls of claude's network namespace: the agent's uid may ping (the
-- trap sees it) and the trap may listen on port 53. A container that joins
-- a namespace by path (network "ns:PATH") without sysctls of its own
-- would set containers.conf's default_sysctls there (ping_group_range
-- "0 0"), so both the sidecar and the claude container carry these:
-- whichever starts last, the namespace is the same.
M.NET_SYSCTLS = { { "net.ipv4.ip_unprivileged_port_start", "0" }, { "net.ipv4.ping_group_range", "1000 1000" } }

-- Rootful, claude's sidecar and the claude container join a network
-- namespace the run makes (core.netns_make: loopback only, up), kept at
-- a path in podman.conmon_base() while they start: both start at once,
-- where joining the sidecar's own (--network container:) waits for the
-- sidecar's start (issue 26: 0.12-0.15 s of a run), and both are removed
-- in one wave. The path goes once both run (the namespace lives while
-- they do); a run killed before that leaves it to clean.sweep_netns.
-- Rootless (podman's user namespace would have to own it), when
-- LEAKBENCH_NETNS=0, or when it cannot be made, the claude container
-- joins the sidecar's.
M.NETNS_PREFIX = "netns-"
M.NETNS_ENV = "LEAKBENCH_NETNS"

function Sandbox:make_netns()
  if self.netns ~= nil then return end
  self.netns = false
  if not self.pm.rootful or os.getenv(M.NETNS_ENV) == "0" then return end
  local base = podman.conmon_base()
  if not base then return end
  local path = ("%s/%s%d-%s"):format(base, M.NETNS_PREFIX, core.getpid(), self.run_id)
  local done = trace.begin("netns", "make")
  local ok, err = core.netns_make(path)
  done({ ok = ok == true, why = err })
  if ok then self.netns = path end
end

function Sandbox:drop_netns()
  if not self.netns then return end
  local ok, err = core.netns_drop(self.netns)
  if not ok then io.stderr:write("leakbench: ", printable.line(err), "\n") end
  self.netns = nil
end

-- A network sidecar: a container of our servers image with loopback only,
-- whose netns another container joins (or, for claude's, the run's own:
-- Sandbox:make_netns); lb-net in it bridges BRIDGES.
-- SOCKS: the socket directories it mounts (names under sock/). With
-- `trap`, lb-net also runs and supervises lb-trap: DNS on 127.0.0.1:53
-- (every name gets its own address in 198.18.0.0/15, the simulated
-- internet, whose TCP and UDP lb-net hands to the trap on M.SIM_PORT),
-- and an HTTP(S) proxy on 127.0.0.1:3128 that record every attempt in
-- egress/ (mounted here only, so the agent can neither alter nor delete
-- it) and answer that nothing exists; its CA (certificate only, the key
-- never leaves its memory) goes to trap-ca/ for the claude container.
function Sandbox:net_spec(short, socks, bridges, trap)
  local spec = self:base_spec(short, { network = short == "net" and self.netns and "ns:" .. self.netns or "none",
    image = self.images.proxy, mounts = {}, sysctls = M.NET_SYSCTLS,
    command = { "lb-net" },
    ready = { { "lb-net: listening", short == "net" and "network sidecar" or "interceptor's network sidecar" } } })
  for _, s in ipairs(socks) do append(spec.mounts, { { self:sock_dir(s), "/sock/" .. s } }) end
  for _, b in ipairs(bridges) do append(spec.command, { "--bridge", b }) end
  if trap then
    append(spec.mounts, { { self.egress, "/egress" }, { self.trapca, "/trap-ca" },
      { self.trapkeep, "/run/lb-keep", ro = true } })
    -- The simulated internet (lb-net --sim): CAP_NET_ADMIN in this netns
    -- only, and CAP_NET_RAW for the socket that sees every ping, which
    -- lb-net drops once 198.18.0.0/15 is set up.
    spec.cap_add = { "NET_ADMIN", "NET_RAW" }
    append(spec.command, { "--sim", tostring(M.SIM_PORT), "--" },
      self:trap_argv({ egress = "/egress", ca = "/trap-ca", keep = "/run/lb-keep" },
        { "--sim-tcp-fd", "3", "--sim-udp-fd", "4", "--sim-icmp-fd", "5" }))
    append(spec.ready, { { "lb-trap: listening", "egress trap in the network sidecar" } })
  end
  return spec
end

-- lb-trap's argv: its records in D.egress, its CA to D.ca, the run's
-- secrets in D.keep, the sockets it is handed (FDS: its options), and the
-- scenario's echo services (hosts that answer with the request).
function Sandbox:trap_argv(d, fds)
  local argv = append({ "lb-trap", "--records", d.egress, "--ca-out", d.ca }, fds,
    { "--keep-secrets", d.keep .. "/secrets.hex" })
  for _, h in ipairs(self.scenario.echo_hosts or {}) do append(argv, { "--echo", h }) end
  return argv
end

-- Rootful, with the suite's upstream and no interceptor, claude's
-- namespace needs no sidecar (issue 26: a container fewer, 0.2 CPU-s a
-- run): core.netns_listen binds there, from the host, the API bridge's
-- port, the trap's DNS (UDP and TCP) and HTTP proxy ports and the
-- simulated internet (its route, its nftables rules, its TCP, UDP and
-- ICMP sockets), in this order; the run holds them (self.held) until the
-- suite's upstream has them (Sandbox:pool_start): the bridge in this
-- run's model and proxy, the trap in a pool child of its own
-- (<run id>-trap, its folder holding only the trap's records, CA and the
-- run's secrets), each in namespaces of its own, where the agent can
-- reach only their sockets. The namespace keeps its path until the end:
-- the egress trap is settled through it (Sandbox:settle_egress). Where
-- it cannot be (no nft on the host, LEAKBENCH_SIDECAR=1), a sidecar, as
-- before, in a namespace made again.
M.HELD_SOCKS = { "tcp:127.0.0.1:" .. API_PORT, "udp:127.0.0.1:53", "tcp:127.0.0.1:53", "tcp:127.0.0.1:3128" }
M.SIDECAR_ENV = "LEAKBENCH_SIDECAR"
M.TRAP_SUFFIX = "-trap"

function Sandbox:hold_sockets()
  if not (self.pool and self.netns and not self.live and not self.in_trial and not self:interceptor())
    or os.getenv(M.SIDECAR_ENV) == "1" then return end
  local done = trace.begin("netns", "listen")
  local set, err = core.netns_listen(self.netns, M.HELD_SOCKS, M.SIM_PORT)
  done { ok = set ~= nil, why = err }
  if not set then
    -- what it made of the simulated internet before it failed stays there
    self.sidecar_why = err
    self:drop_netns()
    return self:make_netns()
  end
  self.held = set
  local p = self.pool .. "/runs/" .. self.run_id .. M.TRAP_SUFFIX
  local subs = { "logs", "egress", "trap-ca", "keep" }
  for _, sub in ipairs(subs) do assert(core.mkdir_p(p .. "/" .. sub, 493)) end
  assert(core.write_file(p .. "/keep/secrets.hex", assert(core.read_file(self.trapkeep .. "/secrets.hex")), 384))
  for _, sub in ipairs(subs) do assert(core.chown(p .. "/" .. sub, UID, UID, true)) end
  -- the trap's CA comes from its folder in the pool (Sandbox:take_trap_ca)
  core.rmtree(self.trapca)
  self.trap_run, self.trapca = p, p .. "/trap-ca"
end

-- The interceptor's port in its netns, and the port of its bridge to the
-- proxy (its UPSTREAM_URL), which must differ.
function Sandbox:icp_ports()
  local port = self:interceptor().port
  return port, port == UPSTREAM_PORT and UPSTREAM_PORT + 1 or UPSTREAM_PORT
end

-- The interceptor, in its sidecar's netns: it listens on its port there
-- and reaches the proxy at 127.0.0.1:UPSTREAM_PORT.
function Sandbox:icp_spec()
  local icp = self:interceptor()
  local _, up_port = self:icp_ports()
  local env = {}
  for k, v in pairs(icp.env) do env[k] = v end
  -- its own env, where it names the same variable, came last and won
  if env[icp.upstream_env] == nil then env[icp.upstream_env] = "http://127.0.0.1:" .. up_port end
  return self:base_spec("icp", { join = self.names.icpnet, image = self.images.subject,
    mounts = { { self.project, "/work", ro = true } }, workdir = "/work", env = env,
    command = table.move(icp.argv, 1, #icp.argv, 1, {}), ready = { { icp.ready, "interceptor" } } })
end

--- sb:topology() -> the run's containers as data, in the order they
--- start: a list of container specs (podman.run_argv: image, mounts, env,
--- limits, labels, the netns each joins, its readiness lines), each also
--- under its role (t.net, t.icpnet, t.up, t.claude, t.icp). The hardening
--- is podman's (podman.HARDENING), the same for all. After stage().
function Sandbox:topology()
  local t = {}
  local function add(spec) t[#t + 1], t[spec.role] = spec, spec end
  local icp = self:interceptor()
  local first = icp and "icp" or "up"
  if not self.held then
    add(self:net_spec("net", { first },
      { "tcp:127.0.0.1:" .. API_PORT .. "=unix:/sock/" .. first .. "/api.sock" }, true))
  end
  if icp then
    local port, up_port = self:icp_ports()
    add(self:net_spec("icpnet", { "icp", "up" }, {
      "unix:/sock/icp/api.sock=tcp:127.0.0.1:" .. port,
      "tcp:127.0.0.1:" .. up_port .. "=unix:/sock/up/api.sock",
    }))
  end
  if not self.pool then add(self:up_spec()) end
  add(self:claude_spec())
  if icp then add(self:icp_spec()) end
  return t
end

-- Starts, together, the containers that carry the network: the upstream,
-- claude's sidecar, and the interceptor's sidecar when there is one.
function Sandbox:start_network()
  self:make_netns()
  self:hold_sockets()
  self.topo = self.topo or self:topology()
  local t = self.topo
  local specs = {}
  if t.net then
    specs[1] = t.net
    self.started[#self.started + 1] = { name = t.net.name, short = "net", log = "net.log" }
  end
  if t.icpnet then
    specs[#specs + 1] = t.icpnet
    self.started[#self.started + 1] = { name = t.icpnet.name, short = "icpnet", log = "icpnet.log" }
  end
  if t.up then self.started[#self.started + 1] = { name = t.up.name, short = "up", log = "proxy.log" } end
  -- Through the service, the claude container too: created with them,
  -- started once its sidecar is (svc:run_all), before any is ready; it
  -- waits at the gate, and the trap's CA reaches it through the files
  -- stage() left in ca/, written over in place (Sandbox:take_trap_ca).
  local claude = self.api_claude and not self.in_trial and t.claude
  if claude then
    self:note_claude()
    specs[#specs + 1] = claude
  end
  if self.live then
    -- Attached (-i): the credential is written to its standard input,
    -- which is then closed; the proxy reads it to the end.
    local h, err = core.start { argv = self.pm:argv(self.pm:run_argv(t.up)), stdin = self.credential_line,
      stdout = "/dev/null", stderr = self.ctrdir .. "/up.podman.txt" }
    self.credential_line = nil
    if not h then self:fail("%s", err) end
    self.up_h = h
  elseif t.up then
    table.insert(specs, 1, t.up)
  end
  -- This run's pair (and trap) in the suite's upstream, while ours
  -- start: the pool may still be starting beside the suite's first runs,
  -- and the trap starts while the claude container does (it waits at
  -- the gate, and the sockets are the run's namespace's already).
  self:podman_all(specs, self.pool and function() self:pool_start() end)
  -- both in it, the namespace needs its path no more
  if claude and not self.held then self:drop_netns() end
  if claude then self:claude_handle() end
end

-- The interceptor, in its sidecar's netns (through the service with the
-- claude container, by Sandbox:start_claude, when that goes through it).
function Sandbox:start_interceptor()
  local spec = self.topo.icp
  if not spec or self.icp_started then return end
  self:note_interceptor()
  if self.api then return self:api_run(spec) end
  self:podman(self.pm:run_argv(spec))
end

-- Claude's sidecar is ready (its bridge and its trap, whose CA the claude
-- container mounts): before the claude container is created.
function Sandbox:await_net()
  if self.trap_started then
    self:pool_await("lb-trap: listening", "the egress trap", self.trap_run .. "/logs")
  else
    self:await("net")
  end
  self:take_trap_ca()
end

-- The egress trap, settled before its records are read. Once Claude
-- Code's container has ended no attempt can begin, but what the agent
-- sent last may still wait, unread, in the trap's sockets; and a UDP
-- socket whose queue is full drops what comes (an agent that floods the
-- simulated internet or DNS can hide a datagram among the dropped). Both
-- are seen from the host in the socket tables of the sidecar's netns
-- (/proc/PID/net/{udp,raw,tcp} of its lb-net: the trap and the bridge
-- listen on IPv4 alone, and the agent's own sockets died with it; each
-- read walks the kernel's whole table, about 0.5 ms):
-- Sandbox:settle_egress waits, at most M.SETTLE_TIMEOUT, until no UDP
-- or raw socket holds a datagram and no TCP
-- connection is open on its side (the API bridge's port aside), twice in
-- a row, and writes what it saw to M.SETTLE_FILE in the run folder:
-- { settled = bool, lost = the datagrams the sockets dropped, lo_drops =
-- the packets loopback dropped before any socket saw them (its backlog,
-- outrun by a flood), queued =, open =, waited = seconds, why = when it
-- could not look }. The evidence marks the egress channel incomplete on
-- a loss or an unsettled trap.
M.SETTLE_TIMEOUT = 2
M.SETTLE_FILE = "egress-settle.json"
local OPEN_TCP = { ["01"] = true, ["03"] = true, ["07"] = true, ["08"] = true }

--- M.parse_sockets(udp, tcp, skip_port) -> { queued =, lost =, open = }:
--- from the text of /proc/net/udp (and raw, concatenated: the same
--- columns) UDP, the bytes waiting in every socket and the datagrams each
--- dropped; from that of /proc/net/tcp TCP, the connections still open
--- on this side (established, half-open, reset, or closed by the peer
--- only) or holding unread bytes, except those on local port SKIP_PORT.
function M.parse_sockets(udp, tcp, skip_port)
  local out = { queued = 0, lost = 0, open = 0 }
  for line in (udp or ""):gmatch("[^\n]+") do
    local f = {}
    for w in line:gmatch("%S+") do f[#f + 1] = w end
    local rx = f[1] and f[1]:match("^%d+:$") and f[5] and f[5]:match("^%x+:(%x+)$")
    if rx then
      out.queued = out.queued + tonumber(rx, 16)
      out.lost = out.lost + (math.tointeger(tonumber(f[#f])) or 0)
    end
  end
  for line in (tcp or ""):gmatch("[^\n]+") do
    local f = {}
    for w in line:gmatch("%S+") do f[#f + 1] = w end
    local port = f[1] and f[1]:match("^%d+:$") and f[2] and f[2]:match(":(%x+)$")
    local rx = f[5] and f[5]:match("^%x+:(%x+)$")
    if port and rx and tonumber(port, 16) ~= skip_port and (OPEN_TCP[f[4]] or tonumber(rx, 16) > 0) then
      out.open = out.open + 1
    end
  end
  return out
end

--- M.lo_drops(dev) -> the packets dropped on lo (received and sent), from
--- the text of /proc/net/dev: what loopback's backlog drops when a flood
--- outruns it, before any socket sees the packet. 0 when there is no lo.
function M.lo_drops(dev)
  local f = {}
  for w in ((dev or ""):match("\n%s*lo:([^\n]*)") or ""):gmatch("%S+") do f[#f + 1] = w end
  return (math.tointeger(tonumber(f[4])) or 0) + (math.tointeger(tonumber(f[12])) or 0)
end

-- The host pid of the network sidecar's lb-net (its conmon's child), or
-- nil and why.
function Sandbox:net_pid()
  local conmon = podman.conmon_pid(self.ctrdir, "net")
  if not conmon then return nil, "the network sidecar's conmon wrote no pid" end
  for pid in (core.read_file(("/proc/%d/task/%d/children"):format(conmon, conmon)) or ""):gmatch("%d+") do
    if (core.read_file("/proc/" .. pid .. "/comm") or ""):match("^lb%-net") then return math.tointeger(pid) end
  end
  return nil, "the network sidecar's lb-net is not running"
end

-- The socket tables of claude's namespace: through its path when the
-- run keeps it (Sandbox:hold_sockets), else through the sidecar's lb-net.
-- { udp =, raw =, tcp =, dev = } | nil, why.
function Sandbox:net_tables()
  if self.trap_started and self.netns then
    local t, err = core.netns_read(self.netns, { "udp", "raw", "tcp", "dev" })
    if not t then return nil, "the run's network namespace could not be read: " .. tostring(err) end
    return t
  end
  local pid, why = self:net_pid()
  if not pid then return nil, why end
  local dir, t = "/proc/" .. pid .. "/net/", {}
  for _, name in ipairs({ "udp", "raw", "tcp", "dev" }) do t[name] = core.read_file(dir .. name) end
  if not t.udp then return nil, "the network sidecar's socket table could not be read" end
  return t
end

function Sandbox:settle_egress()
  local t0, rec = core.now(), { settled = false, lost = 0 }
  local calm, looks, why = 0, 0
  while true do
    local t
    t, why = self:net_tables()
    if not t then break end
    looks = looks + 1
    -- the raw ICMP socket's table has the same columns
    local s = M.parse_sockets(t.udp .. (t.raw or ""), t.tcp, API_PORT)
    rec.lost, rec.queued, rec.open = s.lost, s.queued, s.open
    rec.lo_drops = M.lo_drops(t.dev)
    calm = (s.queued == 0 and s.open == 0) and calm + 1 or 0
    if calm >= 2 then
      rec.settled = true
      break
    end
    if core.now() - t0 >= M.SETTLE_TIMEOUT then break end
    core.sleep(0.001)
  end
  rec.why, rec.looks, rec.waited = why, looks, math.floor((core.now() - t0) * 1000 + 0.5) / 1000
  self.timings.egress_settle = rec.waited
  local ok, err = core.write_file(self.dir .. "/" .. M.SETTLE_FILE, json.encode(rec) .. "\n", 420)
  if not ok then self:fail("cannot write %s: %s", M.SETTLE_FILE, err) end
end

--- sb:take_trap_ca(). Copies what the trap wrote to trap-ca/ (CA_FILES)
--- into ca/, which only we write, for the claude container to mount: a
--- bind mount's source is resolved on the host, so a link the trap left
--- there (a trap is a container, and its folder is written from inside
--- it) would mount a host file of its choosing. Read beneath trap-ca/:
--- no link followed, regular files only, at most M.CA_FILE_CAP bytes
--- each; anything else fails the run.
function Sandbox:take_trap_ca()
  for _, name in ipairs(CA_FILES) do
    local data, info = core.read_beneath(self.trapca, name, M.CA_FILE_CAP + 1)
    if not data then
      self:fail("the egress trap's %s: %s", name, printable.line(tostring(info), 300))
    elseif #data > M.CA_FILE_CAP then
      self:fail("the egress trap's %s is larger than %d bytes", name, M.CA_FILE_CAP)
    end
    local ok, err = core.write_file(self.cadir .. "/" .. name, data, 420)
    if not ok then self:fail("cannot copy the egress trap's %s: %s", name, err) end
  end
end

-- Every other container of the network is ready, each by its own log.
function Sandbox:await_network()
  if self.pool and not self.pool_fell_back then self:pool_await() else self:await("up") end
  if self.topo.icp then
    self:await("icpnet")
    self:await("icp")
  end
end

-- The suite's upstream, for this run (M.pool_spec): POST /runs/<run id>,
-- the argv of its model and proxy; it may not listen yet (the runner
-- starts it beside the first runs): asked again until it does, at most
-- READY_TIMEOUT. When it is not there (it could not start, ended, or
-- does not answer), the run starts its own (Sandbox:pool_fallback) on the
-- same folders.
function Sandbox:pool_start()
  local sock, path = self.pool .. M.POOL_CTL, "/runs/" .. self.run_id
  local fds = self.held and self.held:list()
  local posts = { { path, upstream_offline(self:record_bytes(), path, fds and 3),
                    fds and { fds[1] }, "model and proxy" } }
  if fds then
    local at = path .. M.TRAP_SUFFIX
    posts[2] = { at, self:trap_argv({ egress = at .. "/egress", ca = at .. "/trap-ca", keep = at .. "/keep" },
      { "--dns-udp-fd", "3", "--dns-tcp-fd", "4", "--http-fd", "5",
        "--sim-tcp-fd", "6", "--sim-udp-fd", "7", "--sim-icmp-fd", "8" }),
      table.move(fds, 2, 7, 1, {}), "egress trap" }
  end
  local deadline = core.now() + READY_TIMEOUT
  for i, post in ipairs(posts) do
    local body = table.concat(post[2], "\0") .. "\0"
    local done = trace.begin("api", "POST pool " .. post[1])
    while true do
      local status, text
      if post[3] then
        status, text = core.uhttp_fds(sock, "POST", post[1], body, post[3], 10)
      else
        status, text = core.uhttp(sock, "POST", post[1], body, 10)
      end
      if status == 201 then
        done { status = status }
        if i == 1 then self.pool_started = true else self.trap_started = true end
        break
      elseif status then
        self:fail("the suite's upstream cannot start this run's %s (HTTP %d): %s", post[4], status,
          printable.line(tostring(text), 300))
      end
      self:check_interrupted()
      if i == 1 and (core.stat(self.pool .. "/failed") or core.now() >= deadline or self:pool_gone()) then
        done { status = status }
        return self:pool_fallback()
      elseif core.now() >= deadline then
        self:fail("the suite's upstream did not take this run's %s within %d s", post[4], READY_TIMEOUT)
      end
      core.sleep(0.01)
    end
  end
  -- they are the pool's now
  if self.held then self.held:close() end
end

-- The run's own upstream container after all, as with LEAKBENCH_POOL=0,
-- on the run's folder of the pool (its records, logs and socket, which
-- the sidecar mounts already); moved into the run folder after, the same.
function Sandbox:pool_fallback()
  self.pool_fell_back = true
  self.timings.pool_fallback = 1
  if self.held then
    -- the sidecar after all, in the namespace the run holds (its
    -- simulated internet is there already: lb-net --sim takes it as it is)
    self.held:close()
    self.held, self.trapca = nil, self.dir .. "/trap-ca"
    assert(core.mkdir_p(self.trapca, 493))
    if self.pm.rootful then assert(core.chown(self.trapca, UID, UID)) end
    local first = "up"
    local net = self:net_spec("net", { first },
      { "tcp:127.0.0.1:" .. API_PORT .. "=unix:/sock/" .. first .. "/api.sock" }, true)
    self.topo.net = net
    self.started[#self.started + 1] = { name = net.name, short = "net", log = "net.log" }
    if self.api then self:api_run(net) else self:podman(self.pm:run_argv(net)) end
  end
  local spec = self:up_spec()
  self.topo.up = spec
  self.started[#self.started + 1] = { name = spec.name, short = "up", log = "proxy.log" }
  if self.api then return self:api_run(spec) end
  self:podman(self.pm:run_argv(spec))
end

-- What this run's model and proxy wrote to their log in the suite's upstream.
function Sandbox:pool_log()
  return core.read_beneath(self.uplogs, "up.log", M.UPSTREAM_FILE_CAP) or ""
end

--- M.pool_gone(dir) -> whether the suite's upstream container of the
--- pool folder DIR has ended (its conmon, which wrote its pid there, no
--- longer runs: a zombie PID 1 has not reaped yet counts as ended); false
--- while it has not started.
function M.pool_gone(dir)
  local pid = podman.conmon_pid(dir, "pool")
  return pid ~= nil and not podman.running(pid)
end

function Sandbox:pool_gone()
  return M.pool_gone(self.pool)
end

-- Why this run's model and proxy in the suite's upstream are no more, or
-- nil: the pool said how they ended (logs/exit), or it ended itself.
function Sandbox:pool_dead()
  local how = core.read_beneath(self.uplogs, "exit", 256)
  local who, logs = "the recording proxy and the scripted model", self.uplogs
  if not how and self.trap_started then
    how = core.read_beneath(self.trap_run .. "/logs", "exit", 256)
    who, logs = "the egress trap", self.trap_run .. "/logs"
  end
  local what = how and ("%s of the suite's upstream container '%s' "
    .. "ended during the run (%s)"):format(who, self.pool:match("[^/]+$"), printable.line(how, 100))
    or self:pool_gone() and "the suite's upstream container died during the run"
  if not what then return nil end
  local log = core.read_beneath(logs, "up.log", M.UPSTREAM_FILE_CAP) or ""
  return ("%s; their log:\n%s"):format(what, log ~= "" and log or "(empty)")
end

-- This run's proxy listens, by its log (or, with LINE, WHAT in the pool
-- child whose logs are in LOGS says LINE).
function Sandbox:pool_await(line, what, logs)
  line, what, logs = line or "lb-proxy: listening", what or "the recording proxy", logs or self.uplogs
  local deadline = core.now() + READY_TIMEOUT
  local done = trace.begin("ready", "pool: " .. line)
  while true do
    local log = core.read_beneath(logs, "up.log", M.UPSTREAM_FILE_CAP) or ""
    if log:find(line, 1, true) then return done { ok = true } end
    local dead = self:pool_dead()
    if dead or core.interrupted() or core.now() >= deadline then
      done { ok = false }
      self:check_interrupted()
      self:fail("%s", dead or ("%s in the suite's upstream did not start within %d s; "
        .. "its log:\n%s"):format(what, READY_TIMEOUT, log ~= "" and log or "(empty)"))
    end
    core.sleep(0.01)
  end
end

-- Files under SRC, copied beneath DST (where a rename cannot: another
-- file system), SRC then removed.
local function move_tree(src, dst)
  if os.rename(src, dst) then return end
  core.mkdir_p(dst, 493)
  for _, rel in ipairs(tree.files(src)) do
    local dir = rel:match("^(.*)/[^/]+$")
    if dir then core.mkdir_p(dst .. "/" .. dir, 493) end
    -- written by the pool's programs: no link followed
    local data = core.read_beneath(src, rel, M.RECORD_FILE_CAP)
    if data then core.write_file(dst .. "/" .. rel, data, 420) end
  end
  core.rmtree(src)
end

-- This run's model and proxy ended (DELETE /runs/<run id>: killed and
-- reaped), and what they wrote moved to the run folder: records/ (as
-- the run's own), proxy.log; model.log by Sandbox:collect_upstream_logs.
function Sandbox:pool_done()
  if not self.pool_run then return end
  if self.pool_started then
    M.pool_end(self.pool, self.run_id, os.getenv(M.LAST_RUN_ENV) == "1")
    self.pool_started = nil
  end
  if self.trap_started then
    -- the trap's records become the run's egress/, its log net.log
    M.pool_end(self.pool, self.run_id .. M.TRAP_SUFFIX)
    self.trap_started = nil
    core.write_file(self.dir .. "/net.log",
      core.read_beneath(self.trap_run .. "/logs", "up.log", M.UPSTREAM_FILE_CAP) or "", 420)
    core.rmtree(self.egress)
    move_tree(self.trap_run .. "/egress", self.egress)
  end
  -- (its own container's log, when it fell back, is proxy.log already)
  if not self.pool_fell_back then core.write_file(self.dir .. "/proxy.log", self:pool_log(), 420) end
  local records = self.own_folders[1]
  core.rmtree(records)
  move_tree(self.records, records)
  core.rmtree(self.own_folders[2])
  self.records = records
end

-- The image of the claude container: the subject's agent layer (built
-- FROM the claude image) when it has one, else the claude image.
function Sandbox:claude_image()
  return self.images.agent or self.images.claude
end

-- Setup commands run in the project, as uid 1000, with no network: the
-- scenario's (in the claude container's image), then the subject's (in its
-- interceptor's image, else the same).
function Sandbox:setup()
  local steps = {}
  for _, argv in ipairs(self.scenario.setup) do
    steps[#steps + 1] = { image = self:claude_image(), argv = argv }
  end
  if self.subject and self.subject.setup then
    steps[#steps + 1] = { image = self.images.subject or self:claude_image(), argv = self.subject.setup.argv }
  end
  local log = {}
  for i, step in ipairs(steps) do
    local argv = self.pm:run_argv { name = self.names.setup .. "-" .. i, role = "setup", rm = true,
      labels = self:labels(), lifetime = self:lifetime(), network = "none", limits = M.LIMITS.setup,
      env = { HOME = "/home/bench" },
      mounts = { { self.project, "/work" } }, workdir = "/work",
      entrypoint = step.argv[1], image = step.image, command = table.move(step.argv, 2, #step.argv, 1, {}) }
    local r, err, raw = self.pm:podman(argv, { timeout = 300 })
    r = r or raw
    if not r then self:fail("setup command %d (%s): %s", i, step.argv[1], err) end
    log[#log + 1] = "$ " .. table.concat(step.argv, " ") .. "\n" .. r.stdout .. r.stderr
    if r.timed_out or r.status ~= 0 then
      core.write_file(self.dir .. "/setup.log", table.concat(log, "\n"), 420)
      self:fail("setup command %d (%s) failed: %s", i, step.argv[1],
        r.timed_out and "timed out" or ("exit " .. tostring(r.status) .. ": "
          .. ((r.stderr:match("[^\n]+")) or "")))
    end
  end
  if #log > 0 then core.write_file(self.dir .. "/setup.log", table.concat(log, "\n"), 420) end
end

-- Claude Code's environment: quiet, the dummy credential, the scenario's
-- and the subject's own, the first hop on loopback.
function Sandbox:claude_env()
  local env = {}
  for k, v in pairs(QUIET_ENV) do env[k] = v end
  for k, v in pairs(auth.dummy_env(self.auth_kind)) do env[k] = v end
  -- The scenario's and the subject's, then the variables that route the
  -- evidence, which no one else sets (the loader refuses them too).
  for k, v in pairs(self.scenario.env) do env[k] = v end
  for k, v in pairs(self.subject and self.subject.env or {}) do env[k] = v end
  env.ANTHROPIC_BASE_URL = "http://127.0.0.1:" .. API_PORT
  -- Every other way out leads to the trap, HTTPS included: the trap's CA
  -- is trusted wherever curl, Python, git, Node and OpenSSL look.
  for _, k in ipairs({ "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY" }) do
    env[k], env[k:lower()] = TRAP_PROXY, TRAP_PROXY
  end
  env.NO_PROXY, env.no_proxy = "127.0.0.1,localhost,::1", "127.0.0.1,localhost,::1"
  local bundle = CA_DIR .. "/bundle.pem"
  env.SSL_CERT_FILE, env.CURL_CA_BUNDLE, env.REQUESTS_CA_BUNDLE = bundle, bundle, bundle
  env.GIT_SSL_CAINFO = bundle
  env.NODE_EXTRA_CA_CERTS = CA_DIR .. "/ca.pem"
  env.CLAUDE_CONFIG_DIR = "/home/bench/.claude"
  env.HOME = "/home/bench"
  return env
end

-- The claude container, in the netns of its sidecar: lb-init waits at
-- the gate (lb-init --gate) until Sandbox:claude() opens it, then becomes
-- Claude Code. Its stdout and stderr (lb-init's relay) are the run's
-- stream.jsonl and stderr.txt: by the CLI, attached; through the suite's
-- service (self.api_claude), written by its conmon to a k8s-file log in
-- the run's containers/ folder (no size cap: a cap starts the file over),
-- which no container mounts, and split into both as it grows
-- (Sandbox:claude_streams); it is then removed with the carriers.
function Sandbox:claude_spec()
  local mounts = {
    { self.config, "/home/bench/.claude" },
    { self.project, "/work" },
    { self.subject_dir, "/opt/subject", ro = true },
    { self.gate, GATE, ro = true },
    { self.etc .. "/resolv.conf", "/etc/resolv.conf", ro = true },
    { self.etc .. "/hosts", "/etc/hosts", ro = true },
    { self.cadir, CA_DIR, ro = true },
    { self.cadir .. "/bundle.pem", "/etc/ssl/certs/ca-certificates.crt", ro = true },
  }
  if self.home_dir then
    local names = {}
    for k in pairs(self.scenario.home) do names[#names + 1] = k end
    table.sort(names)
    for _, rel in ipairs(names) do
      mounts[#mounts + 1] = { self.home_dir .. "/" .. rel, "/home/bench/" .. rel, ro = true }
    end
  end
  mounts[#mounts + 1] = { assert(self.init_dir, "claude_spec before stage"), INIT_ROOT, ro = true }
  return { name = self.names.claude, role = "claude", rm = not self.api_claude, labels = self:labels(),
    lifetime = self:lifetime(),
    log = self.api_claude and { dir = self.ctrdir, name = "claude", max = false } or nil,
    join = not self.netns and self.names.net or nil, network = self.netns and "ns:" .. self.netns or nil,
    sysctls = self.netns and M.NET_SYSCTLS or nil,
    limits = self:claude_limits(), ulimits = { fsize = self:fsize() },
    -- the host kernel's command line is not the agent's to read
    masks = { "/proc/cmdline" },
    mounts = mounts, env = self:claude_env(), workdir = "/work",
    entrypoint = M.INIT, image = self:claude_image(),
    command = append({ "--gate", GATE .. "/open", "--nodump", M.NODUMP, "--", "/usr/local/bin/claude" },
      M.claude_argv(self.scenario, self.session_id, self.model, self.subject, self.mcp)) }
end

-- The interceptor is one of the run's containers (removed with them).
function Sandbox:note_interceptor()
  self.icp_started = true
  self.started[#self.started + 1] = { name = self.topo.icp.name, short = "icp", log = "interceptor.log" }
end

-- The claude container is one of the run's; through the service, its
-- output files are there from the start, as an attached podman's are.
function Sandbox:note_claude()
  self.started[#self.started + 1] = { name = self.topo.claude.name }
  if self.api_claude then
    core.write_file(self.dir .. "/stream.jsonl", "", 420)
    core.write_file(self.dir .. "/stderr.txt", "", 420)
  end
end

-- The handle on the claude container started through the service.
function Sandbox:claude_handle()
  local h, err = self.api:handle(self.topo.claude)
  if not h then self:fail("%s", err) end
  self.claude_h = h
end

-- Creates and starts the claude container, unless Sandbox:start_network
-- did; it waits at the gate. Through the service, the interceptor (when
-- there is one) is created beside it and started beside it
-- (Sandbox:podman_all): neither waits for the other.
function Sandbox:start_claude()
  if self.claude_h then return end
  local spec = self.topo.claude
  self:note_claude()
  if self.api_claude then
    local specs = { spec }
    if self.topo.icp then
      self:note_interceptor()
      specs[2] = self.topo.icp
    end
    self:podman_all(specs)
    return self:claude_handle()
  end
  local h, err = core.start {
    argv = self.pm:argv(self.pm:run_argv(spec)),
    stdout = self.dir .. "/stream.jsonl", stderr = self.dir .. "/stderr.txt",
  }
  if not h then self:fail("%s", err) end
  self.claude_h = h
end

-- Fails when the claude container ended before the gate opened.
function Sandbox:check_claude_waiting()
  local h = self.claude_h
  if not h:done() then return end
  local r = h:wait(0)
  self:claude_streams(true)
  local text = core.read_file(self.dir .. "/stderr.txt") or ""
  self:fail("the claude container ended before Claude Code started (exit %s): %s",
    tostring(r and (r.status or r.signal)), text:match("[^\n]+") or "no message")
end

-- Opens the gate and waits for Claude Code, at most the run's timeout.
function Sandbox:claude()
  self:check_claude_waiting()
  assert(core.write_file(self.gate .. "/open", "", 420))
  local opened = core.now()
  trace.write("gate", "open", opened, opened)
  local h = self.claude_h
  -- Waited in slices: a carrier that dies (the trap, the proxy, a
  -- sidecar, the interceptor) ends the run at once, as an error that names
  -- it, rather than after Claude Code's retries or the timeout.
  -- Meanwhile the transcript watcher (watch.lua) follows Claude Code's
  -- transcript, more often.
  local deadline, r = core.now() + self.timeout
  local next_check = core.now() + M.CARRIER_POLL
  self.watch = watch.new(self.dir, self.session_id)
  -- the process whose end is the container's (its conmon, or the attached
  -- podman run), followed by a descriptor: the wait wakes at its end, a
  -- change of the transcript or the next check of the carriers, where it
  -- looked every M.WATCH_POLL (no pidfd: as before)
  local pid = type(h.pid) == "function" and h:pid() or h.pid
  local pidfd <close> = math.type(pid) == "integer" and core.pidfd(pid) or nil
  -- the CPU time the watcher costs this process (timings.watch_cpu)
  local watch_cpu = 0
  repeat
    local now = core.now()
    local left = deadline - now
    local slice = math.max(0, math.min(pidfd and next_check - now or M.WATCH_POLL, left))
    -- the watcher cannot wait (no inotify, a folder it cannot watch):
    -- looked at every M.WATCH_POLL
    r = h:wait(self.watch:wait(slice, pidfd) and 0 or math.min(slice, M.WATCH_POLL))
    local c0 = os.clock()
    self.watch:poll()
    watch_cpu = watch_cpu + os.clock() - c0
    self.timings.watch_cpu = watch_cpu
    local dead = not r and core.now() >= next_check and (self:dead_carrier() or self:over_size())
    if not r and core.now() >= next_check then
      next_check = core.now() + M.CARRIER_POLL
      self:claude_streams()
    end
    if dead then
      self.watch:close()
      h:kill("SIGTERM")
      if not h:wait(5) then h:kill("SIGKILL"); h:wait(5) end
      self.claude_h = nil
      h:close()
      self:fail("%s", dead)
    end
  until r or left <= M.WATCH_POLL
  self.watch:close()
  if not r then
    self.timed_out = true
    h:kill("SIGTERM")
    r = h:wait(5)
    if not r then
      h:kill("SIGKILL")
      r = h:wait(5)
    end
  end
  self.claude_h = nil
  h:close()
  -- its conmon has ended: so has the container
  self.claude_ended = r ~= nil and self.api_claude or nil
  self:claude_streams(true)
  if not r then self:fail("podman run of the claude container did not end") end
  self.returncode = r.status
  if r.interrupted then
    error({ run_error = true, interrupted = core.interrupted() or "SIGINT", msg = "interrupted" }, 0)
  end
  if r.error then self:fail("%s", r.error) end
end

-- Through the service: stream.jsonl and stderr.txt from the claude
-- container's log (Sandbox:claude_spec): what it holds beyond the last
-- look, in whole log lines, appended to each (podman.k8s_log_streams),
-- while Claude Code runs (every CARRIER_POLL) and, FINAL, once its conmon
-- has ended; so that both grow as an attached podman's do.
-- Read STREAMS_CHUNK bytes at a time, so that what Claude Code printed
-- between two looks never sits in memory whole (conmon cuts its log lines
-- far shorter: a piece holds whole lines).
M.STREAMS_CHUNK = 1048576

function Sandbox:claude_streams(final)
  if not self.api_claude or self.streams_done or not self.ctrdir then return end
  local f = io.open(self.ctrdir .. "/claude.ctr.log", "rb")
  if not f then return end
  f:seek("set", self.streams_at or 0)
  repeat
    local chunk = f:read(M.STREAMS_CHUNK) or ""
    local whole = chunk:match("^.*\n") or ""
    self.streams_at = (self.streams_at or 0) + #whole
    if whole ~= "" then
      f:seek("set", self.streams_at)
      local out, err = podman.k8s_log_streams(whole)
      for _, w in ipairs({ { "stream.jsonl", out }, { "stderr.txt", err } }) do
        if w[2] ~= "" then
          local g = io.open(self.dir .. "/" .. w[1], "ab")
          if g then
            g:write(w[2])
            g:close()
          end
        end
      end
    end
  until whole == "" or #chunk < M.STREAMS_CHUNK
  f:close()
  if final then self.streams_done = true end
end

-- What Claude Code looks for in a --plugin-dir, for the message of a
-- plugin that did not load: its manifest, or one of the parts of a plugin
-- (2.1.332 loads a folder with hooks/hooks.json and no manifest, and
-- skips one with neither: both seen in spec/e2e/protections_spec.lua).
M.PLUGIN_MANIFEST = ".claude-plugin/plugin.json"
M.PLUGIN_PARTS = { M.PLUGIN_MANIFEST, "hooks/hooks.json", "commands", "agents", "skills", ".mcp.json" }
local PLUGIN_LS = [[
cd "$1" 2>/dev/null || { echo "@missing"; exit 0; }
ls -A
ls -A .claude-plugin 2>/dev/null | sed 's|^|.claude-plugin/|'
ls -A hooks 2>/dev/null | sed 's|^|hooks/|'
]]

-- Why plugin DIR (a path in the claude container) may not have loaded:
-- what Claude Code expects there and what the folder holds. Under
-- /opt/subject, the run's staged subject folder is read; elsewhere the
-- folder is listed in the claude image by a short container of the run
-- (no network, every sandbox flag). Returns a sentence, or nil when the
-- folder cannot be looked at.
function Sandbox:plugin_diagnosis(dir)
  local names, missing = {}, false
  local rel = dir:match("^/opt/subject/(.*)$")
  if rel then
    local host = self.dir .. "/subject/" .. rel
    local st = core.stat(host)
    if not st or st.type ~= "dir" then
      missing = true
    else
      for _, n in ipairs(core.listdir(host) or {}) do names[#names + 1] = n end
      for _, sub in ipairs({ ".claude-plugin", "hooks" }) do
        for _, n in ipairs(core.listdir(host .. "/" .. sub) or {}) do names[#names + 1] = sub .. "/" .. n end
      end
    end
  else
    local argv = self.pm:run_argv { name = self.names.claude .. "-ls", role = "ls", rm = true,
      labels = self:labels(), lifetime = self:lifetime(), network = "none", limits = M.LIMITS.setup,
      entrypoint = "/bin/sh", image = self:claude_image(), command = { "-c", PLUGIN_LS, "sh", dir } }
    local r = self.pm:podman(argv, { timeout = 60 })
    if not r then return nil end
    for line in r.stdout:gmatch("[^\n]+") do
      if line == "@missing" then missing = true else names[#names + 1] = line end
    end
  end
  local expect = string.format("Claude Code loads a plugin from a folder holding %s or a part of a "
    .. "plugin (%s)", M.PLUGIN_MANIFEST, table.concat(M.PLUGIN_PARTS, ", ", 2))
  if missing then
    return string.format("%s, and '%s' is not a folder in the claude container", expect, dir)
  end
  table.sort(names)
  local set, found = {}, {}
  for _, n in ipairs(names) do set[n] = true end
  for _, part in ipairs(M.PLUGIN_PARTS) do
    if set[part] then found[#found + 1] = part end
  end
  if #found > 0 then
    return string.format("'%s' holds %s: Claude Code's stderr (stderr.txt) may say why it refused it",
      dir, table.concat(found, ", "))
  end
  local shown = {}
  for i = 1, math.min(#names, 12) do shown[i] = printable.line(names[i], 80) end
  if #names > 12 then shown[#shown + 1] = "..." end
  return string.format("%s, and '%s' has none of them (it holds: %s)", expect, dir,
    #names > 0 and table.concat(shown, ", ") or "nothing")
end

-- After Claude Code: every container that carried the run (the network
-- sidecars, the upstream, the interceptor) must still be running, or what
-- it recorded is incomplete and the run cannot be trusted.
M.CARRIER_POLL = 0.5   -- seconds between checks of the carriers while Claude Code runs
M.WATCH_POLL = 0.02    -- seconds between looks at the transcript (watch.lua)

-- The message naming the first carrier container of the run that is no
-- longer running (its conmon is gone), with its log; nil when all run.
function Sandbox:dead_carrier()
  local pooled = self.pool_started and not self.pool_fell_back and self:pool_dead()
  if pooled then return pooled end
  for _, c in ipairs(self.started) do
    if c.short then
      local pid = podman.conmon_pid(self.ctrdir, c.short)
      if pid and not podman.running(pid) then
        local text = podman.log_text(self.ctrdir, c.short)
        return ("container '%s' died during the run; its log:\n%s"):format(c.name,
          text ~= "" and text or "(empty)")
      end
    end
  end
end

-- Bytes of a size such as "512m" (k, m, g: powers of 1024).
local function size_bytes(v)
  local n, unit = tostring(v):match("^(%d+)([kKmMgG]?)$")
  local shift = ({ k = 10, m = 20, g = 30 })[unit:lower()] or 0
  return math.tointeger(tonumber(n)) << shift
end
M.size_bytes = size_bytes

-- The project and config dirs are bind mounts the agent writes: their
-- size is capped by watching (limits.project, limits.config; the claude
-- container's other writable mounts are size-capped tmpfs). Returns the
-- message naming the mount over its cap, or nil. One file is held to its
-- cap by the kernel (Sandbox:fsize); a burst of many files between two
-- looks (CARRIER_POLL) can overshoot by what the agent writes meanwhile.
function Sandbox:over_size()
  local l = self:claude_limits()
  for _, m in ipairs({ { "project", "/work", self.project }, { "config", "/home/bench/.claude", self.config } }) do
    local cap = size_bytes(l[m[1]])
    local used = core.disk_usage(m[3], "", 1000000)
    if used and used > cap then
      return ("the agent wrote more than %s into %s (limits.%s): the run was stopped"):format(l[m[1]], m[2], m[1])
    end
  end
end

function Sandbox:check_alive()
  local dead = self:dead_carrier()
  if dead then self:fail("%s", dead) end
end

-- After Claude Code: a cap of the recording proxy that cut what it
-- records (its records/caps.json: the records, their bytes, a response
-- file) makes the run an error that names it; what was recorded is kept
-- and scanned, and the run keeps its leak letters. Caps that only refuse
-- a request before it is forwarded (an oversized head or body, a body
-- that decodes too large) or make connections wait cut nothing the
-- provider received: anyone on 127.0.0.1:8080 (the agent too) can hit
-- them, so they must not buy an error. They stay in caps.json.
M.ERROR_CAPS = { records = true, record_bytes = true, response_file = true }

-- records/ and upstream-logs/ are written by the upstream's processes:
-- what is read from them is read beneath them (core.read_beneath: no link
-- followed, a regular file only, capped), as evidence is, so that a link
-- planted there never brings a host file into the run's artifacts.
M.UPSTREAM_FILE_CAP = 64 << 20

function Sandbox:check_caps()
  local text = core.read_beneath(self.records, "caps.json", M.UPSTREAM_FILE_CAP)
  if not text then return end
  local ok, caps = pcall(require("cjson").decode, text)
  local names = {}
  if ok and type(caps) == "table" then
    for name, c in pairs(caps) do
      if M.ERROR_CAPS[name] then
        names[#names + 1] = ("'%s' (%s)"):format(name, type(c) == "table" and c.message or "?")
      end
    end
  else
    names[1] = text
  end
  if #names == 0 then return end
  table.sort(names)
  self:fail("the recording proxy hit its cap %s", table.concat(names, ", "))
end

-- The scripted model's log into the run's folder, its folder removed.
function Sandbox:collect_upstream_logs()
  if not self.uplogs then return end
  local model = core.read_beneath(self.uplogs, "model.log", M.UPSTREAM_FILE_CAP)
  if model then core.write_file(self.dir .. "/model.log", model, 420) end
  core.rmtree(self.uplogs)
end

-- NAMES (containers of the run) in waves of removal: first every one
-- that no container of the topology joins, then those others join (a
-- network sidecar: podman refuses to remove it while its joiner is
-- there). A wave left empty is dropped.
function Sandbox:removal_waves(names)
  local joined = {}
  for _, spec in ipairs(self.topo or {}) do
    if spec.join then joined[spec.join] = true end
  end
  local first, last = {}, {}
  for _, n in ipairs(names) do
    local w = joined[n] and last or first
    w[#w + 1] = n
  end
  local waves = {}
  for _, w in ipairs({ first, last }) do
    if #w > 0 then waves[#waves + 1] = w end
  end
  return waves
end

-- The run's containers known to have ended (svc:rm_waves sends them no
-- SIGKILL): Claude Code's, once its conmon was seen to end.
function Sandbox:ended_set()
  return { [self.names.claude] = self.claude_ended or nil }
end

-- Always: logs, containers, sockets. Never raises.
function Sandbox:finally()
  local pm = self.pm
  -- the transcripts' append-only attribute goes before anything else
  if self.watch then self.watch:close() end
  -- Every container of the run in one command.
  local names = {}
  for _, c in ipairs(self.started or {}) do names[#names + 1] = c.name end
  for i = 1, #self.scenario.setup + 1 do names[#names + 1] = self.names.setup .. "-" .. i end
  local rm_ok
  if self.ok and not self.live and os.getenv(podman.DEFER_ENV) == "1" then
    -- The runner removes the carriers while the next run starts; Claude
    -- Code's container (--rm) is gone already, and so are the setup
    -- steps'. Their logs are whole: nothing writes to them any more.
    local carriers = {}
    for _, c in ipairs(self.started) do
      if c.short then carriers[#carriers + 1] = c.name end
    end
    -- through the service, Claude Code's container is still there (it
    -- joins the sidecar's netns: removed in a wave before it)
    if self.api_claude then carriers[#carriers + 1] = self.names.claude end
    local waves, ended = self:removal_waves(carriers), self:ended_set()
    if os.getenv(M.LAST_RUN_ENV) == "1" and self.api and #waves == 1 and all_in(waves[1], ended) then
      -- the suite's last run: they go now, while the evidence is scanned
      self.removal, rm_ok = self.api:rm_start(waves[1]), true
    else
      rm_ok = podman.defer_rm(self.dir, waves, ended)
    end
    if not rm_ok then rm_ok = pm:podman(append({ "rm", "-f", "-i", "-t", "0" }, names),
      { uninterruptible = true, timeout = 60 }) end
  elseif self.api then
    -- in waves: a container that joins another's namespaces goes before it
    rm_ok = self.api:rm_waves(self:removal_waves(names), self:ended_set())
  else
    rm_ok = pm:podman(append({ "rm", "-f", "-i", "-t", "0" }, names),
      { uninterruptible = true, timeout = 60 })
  end
  -- The containers are gone: their attached podman runs end now (reaped
  -- here when the run failed before Claude Code's turn).
  for _, k in ipairs({ "claude_h", "up_h" }) do
    local h = self[k]
    if h then
      if not h:wait(10) then h:kill("SIGKILL"); h:wait(5) end
      h:close()
      self[k] = nil
    end
  end
  self.credential_line = nil
  self:claude_streams(true)
  -- The logs were written to files as the containers ran (pm:log_args).
  for _, c in ipairs(self.started or {}) do
    if c.log and self.ctrdir then
      core.write_file(self.dir .. "/" .. c.log, podman.log_text(self.ctrdir, c.short), 420)
    end
  end
  if self.held then self.held:close() end
  self:drop_netns()
  self:pool_done()
  self:collect_upstream_logs()
  for _, p in ipairs({ self.ctrdir, self.gate, self.sock, self.etc, self.trapca, self.cadir, self.trapkeep,
                       self.pool_run, self.trap_run }) do
    if p then core.rmtree(p) end
  end
  -- When anything went wrong, a check by label catches what escaped the
  -- names (a run killed half-way, a podman that failed).
  if not (rm_ok and self.ok) then
    local left = pm:containers("leakbench.run=" .. self.run_id)
    if not left or #left > 0 then
      pm:remove_by_label("leakbench.run=" .. self.run_id)
    end
  end
  -- Claude Code's files are owned by uid 1000 in rootful mode; hand them
  -- back so the user can read and delete the artifacts.
  if pm.rootful then
    local uid, gid = core.getuid(), core.getgid()
    for _, p in ipairs({ self.project, self.config, self.records, self.egress }) do
      if p and core.stat(p) then core.chown(p, uid, gid, true) end
    end
  end
  self:unhide_dir()
end

--- r:await_removal(): the removal Sandbox:finally started (the suite's
--- last run, M.LAST_RUN_ENV), awaited; what it could not remove goes by
--- the run's label. Never raises.
function Sandbox:await_removal()
  local removal = self.removal
  if not removal then return end
  self.removal = nil
  if not removal:wait() then self.pm:remove_by_label("leakbench.run=" .. self.run_id) end
end

-- The whole run. Returns a result table (never raises for run errors).
function Sandbox:execute()
  local t0 = core.now()
  self.started = {}
  local ok, err = pcall(function()
    self:phase("stage", function()
      self:hide_dir()
      self:stage()
    end)
    if self.live then self:read_credential() end
    self:check_interrupted()
    self:phase("containers", function()
      self:start_network()
      self:await_net()
      self:start_claude()
      self:start_interceptor()
      self:await_network()
      self:check_claude_waiting()
    end)
    self:check_interrupted()
    self:phase("setup", function() self:setup() end)
    self:check_interrupted()
    self:phase("claude", function() self:claude() end)
    self:check_alive()
    self:check_caps()
    self:settle_egress()
  end)
  self.ok = ok and not self.timed_out
  local t1, c1 = core.now(), M.machine_cpu()
  local done = trace.begin("phase", "cleanup")
  self:finally()
  done()
  self.timings.cleanup = core.now() - t1
  local c2 = M.machine_cpu()
  if c1 and c2 then self.timings.cleanup_cpu = c2 - c1 end
  self.timings.total = core.now() - t0
  if not ok then
    if type(err) == "table" and err.run_error then
      return { verdict = err.interrupted and "interrupted" or "error", reason = err.msg }
    end
    return { verdict = "error", reason = "internal error: " .. tostring(err) }
  end
  return { verdict = self.timed_out and "timeout" or nil }
end

--- sb:trial(script) -> result | nil, err. Doctor's trial mode: the run's
--- own topology (Sandbox:topology, the same table a run starts), staged and
--- started as a run starts it; then, in place of lb-init and Claude Code,
--- the claude container's spec with /bin/bash -c SCRIPT as its program
--- (same image, mounts, namespaces, hardening and limits), attached. Its
--- podman result (stdout: what SCRIPT printed). Everything is removed
--- before it returns, as after a run.
function Sandbox:trial(script)
  self.started, self.in_trial = {}, true
  local ok, res = pcall(function()
    self:stage()
    self:start_network()
    self:await_net()
    self:await_network()
    local spec = {}
    for k, v in pairs(self.topo.claude) do spec[k] = v end
    spec.entrypoint, spec.command = "/bin/bash", { "-c", script }
    self.started[#self.started + 1] = { name = spec.name }
    return self:podman(self.pm:run_argv(spec), { timeout = 60 })
  end)
  self.ok = ok
  self:finally()
  if not ok then
    return nil, type(res) == "table" and res.run_error and res.msg or tostring(res)
  end
  return res
end

M.Sandbox = Sandbox
return M

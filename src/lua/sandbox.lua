-- One isolated run: a scenario, optionally a subject, in containers.
--
-- Topology (DESIGN.md): a network of the run's own with no egress holds the
-- claude container, the interceptor (if the subject has one) and one leg of
-- the recording proxy; the proxy's other leg is on a second network of the
-- run's own that holds the upstream (the scripted model; offline this
-- network is internal too) or reaches the real API (--live). Everything the
-- run creates carries the labels leakbench=1, leakbench.run=<run id>,
-- leakbench.suite=<suite id>, leakbench.pid=<our pid>.
--
-- Whatever happens (success, timeout, error, SIGINT, SIGTERM) the finally
-- step collects the logs, removes every container and network of the run
-- and the credential file, and the artifacts stay in the run directory.
local cjson = require "cjson"
local json = require "leakbench.json"
local core = require "leakbench.core"
local lb = require "leakbench"
local auth = require "leakbench.auth"
local podman = require "leakbench.podman"

local M = {}

local UID = 1000
local PROXY_PORT = 8080
local MODEL_PORT = 8081
local READY_TIMEOUT = 30
local GATE = "/run/leakbench-gate"

-- The claude container is created while the upstream starts, and waits
-- for the gate file before it becomes Claude Code, so that creating it
-- (the slowest podman step) overlaps everything before it. The wait is
-- bounded: a run whose harness vanished ends by itself.
local GATE_SCRIPT = [[
i=0
while [ ! -e ]] .. GATE .. [[/open ]; do
  i=$((i + 1))
  if [ $i -gt 90000 ]; then echo "leakbench: the run never opened the gate" >&2; exit 125; fi
  sleep 0.02
done
exec /usr/local/bin/claude "$@"
]]

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

-- The arguments of Claude Code inside the container (the seed's
-- claude_args); the program itself is the container's entrypoint.
function M.claude_argv(scenario, session_id, model)
  local argv = {
    "-p", scenario.prompt,
    "--session-id", session_id,
    "--model", model,
    "--output-format", "stream-json",
    "--verbose",
    "--permission-mode", "bypassPermissions",
    "--setting-sources", "project",
    "--settings", "/opt/subject/settings.json",
    "--strict-mcp-config",
  }
  if scenario.max_turns then
    argv[#argv + 1] = "--max-turns"
    argv[#argv + 1] = tostring(scenario.max_turns)
  end
  for _, a in ipairs(scenario.claude_args or {}) do argv[#argv + 1] = a end
  return argv
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

local Run = {}
Run.__index = Run

-- new(opts): opts.scenario, opts.subject (or nil), opts.dir (the run's
-- artifact directory, created by the caller), opts.images {claude=, proxy=,
-- subject=}, opts.pm (leakbench.podman object), opts.run_id,
-- opts.suite_id, opts.live, opts.model, opts.timeout, opts.keep_transcripts.
function M.new(opts)
  local self = setmetatable({}, Run)
  for k, v in pairs(opts) do self[k] = v end
  self.tag = self.run_id:sub(1, 12)
  self.names = {
    int = "lb-" .. self.tag .. "-int",
    egress = "lb-" .. self.tag .. "-egress",
    model = "lb-" .. self.tag .. "-model",
    proxy = "lb-" .. self.tag .. "-proxy",
    icp = "lb-" .. self.tag .. "-icp",
    claude = "lb-" .. self.tag .. "-claude",
    setup = "lb-" .. self.tag .. "-setup",
  }
  self.timings = {}
  self.session_id = core.uuid()
  return self
end

function Run:labels()
  return {
    "--label", "leakbench=1",
    "--label", "leakbench.run=" .. self.run_id,
    "--label", "leakbench.suite=" .. (self.suite_id or self.run_id),
    "--label", "leakbench.pid=" .. core.getpid(),
  }
end

local function append(t, ...)
  for _, list in ipairs({ ... }) do
    for _, v in ipairs(list) do t[#t + 1] = v end
  end
  return t
end

-- podman(argv, opts) -> result or raises {stage=, msg=}.
function Run:podman(argv, opts)
  local r, err = self.pm:podman(argv, opts)
  if not r then error({ run_error = true, msg = err }, 0) end
  return r
end

function Run:fail(fmt, ...)
  error({ run_error = true, msg = string.format(fmt, ...) }, 0)
end

function Run:phase(name, fn)
  local t0 = core.now()
  local ok, err = pcall(fn)
  self.timings[name] = core.now() - t0
  if not ok then error(err, 0) end
end

function Run:check_interrupted()
  local sig = core.interrupted()
  if sig then error({ run_error = true, interrupted = sig, msg = "interrupted by " .. sig }, 0) end
end

-- Stage: project, home files, claude config, subject dir, script, records.
function Run:stage()
  local d = self.dir
  self.project = d .. "/project"
  self.config = d .. "/claude-config"
  self.records = d .. "/records"
  self.subject_dir = d .. "/subject"
  self.ctrdir = d .. "/containers"
  self.gate = d .. "/gate"
  for _, p in ipairs({ self.project, self.config, self.records, self.subject_dir,
                       self.ctrdir, self.gate }) do
    assert(core.mkdir_p(p, 493))
  end
  stage_files(self.project, self.scenario.files)
  if next(self.scenario.home) then
    self.home_dir = d .. "/home"
    stage_files(self.home_dir, self.scenario.home)
  end
  local cache = auth.feature_cache(os.getenv, core.read_file)
  assert(core.write_file(self.config .. "/.claude.json",
    next(cache) and json_encode(cache) or "{}", 384))
  local subject = self.subject
  local settings = M.merge_settings(self.scenario.settings, subject and subject.settings or {})
  local text = next(settings) and json_encode(settings) or "{}"
  if subject then stage_files(self.subject_dir, subject.files) end
  assert(core.write_file(self.subject_dir .. "/settings.json", text, 420))
  assert(core.write_file(d .. "/settings.json", text, 420))
  if not self.live then
    if not self.scenario.model then
      self:fail("scenario '%s' has no model script: it can only run with --live", self.scenario.name)
    end
    assert(core.write_file(d .. "/script.json", lb.script_json(self.scenario.model), 420))
  end
  -- Rootful podman runs the containers as uid 1000 without a user
  -- namespace: give it what it must write.
  if self.pm.rootful then
    for _, p in ipairs({ self.project, self.config, self.records }) do
      assert(core.chown(p, UID, UID, true))
    end
  end
end

-- Where credential files live: memory-backed storage of the user's own
-- when there is one, else /dev/shm. `leakbench clean` sweeps leftovers
-- (a run killed with SIGKILL while its proxy started).
M.CREDENTIAL_PREFIX = "leakbench-cred-"
function M.credential_base()
  local base = os.getenv("XDG_RUNTIME_DIR")
  if not base or base == "" or not core.stat(base) then base = "/dev/shm" end
  return base
end

-- The real credential, for --live: a 0600 file in a 0700 directory on
-- memory-backed storage, readable by the proxy's uid only.
function Run:write_credential()
  local real, kind_or_err = auth.host(os.getenv, core.read_file)
  if not real then self:fail("%s", kind_or_err) end
  self.auth_kind = kind_or_err
  self.secret_dir = assert(core.tmpdir(M.CREDENTIAL_PREFIX .. core.getpid() .. "-",
    M.credential_base()))
  self.auth_file = self.secret_dir .. "/auth"
  assert(core.write_file(self.auth_file, real, 384))
  if self.pm.rootful then
    assert(core.chown(self.secret_dir, UID, UID))
    assert(core.chown(self.auth_file, UID, UID))
  end
  self.real_credential = real:match("^%a+:(.*)$")
end

-- Runs several podman commands at once; raises on the first failure, after
-- all have ended (nothing is left running behind the error).
function Run:podman_all(argvs)
  local handles = {}
  for i, argv in ipairs(argvs) do
    local h, err = core.start({ argv = self.pm:argv(argv), timeout = self.pm.timeout })
    if not h then
      for _, o in ipairs(handles) do o:wait() end
      self:fail("%s", err)
    end
    handles[i] = h
  end
  local failed
  for i, h in ipairs(handles) do
    local r = h:wait()
    local msg = r and require("leakbench.podman").failure(argvs[i][1], r)
    if not r then msg = "podman " .. argvs[i][1] .. " did not end" end
    failed = failed or msg
  end
  if failed then self:fail("%s", failed) end
end

-- Both networks of the run, created together.
function Run:networks()
  local egress = { "network", "create" }
  if not self.live then egress[#egress + 1] = "--internal" end
  self:podman_all({
    append({ "network", "create", "--internal" }, self:labels(), { self.names.int }),
    append(egress, self:labels(), { self.names.egress }),
  })
end

-- Flags every detached container of the run gets; `short` names its log
-- (see pm:log_args) and the artifact the log becomes.
function Run:base_flags(short)
  return append({ "run", "-d", "--name", self.names[short] }, self:labels(), self.pm:run_args(),
    self.pm:log_args(self.ctrdir, short), {
    "--cap-drop=all", "--security-opt=no-new-privileges", "--read-only",
    "--tmpfs", "/tmp:rw,mode=1777",
  })
end

function Run:wait_ready(short, line, what)
  local ok, logs, why = podman.wait_ready(self.ctrdir, short, line, READY_TIMEOUT)
  if not ok then
    self:check_interrupted()
    self:fail("%s container '%s' %s; its log:\n%s", what, self.names[short],
      why == "exited" and "exited before it was ready"
        or ("did not start within " .. READY_TIMEOUT .. " s"),
      logs ~= "" and logs or "(empty)")
  end
end

function Run:model_argv()
  return append(self:base_flags("model"), {
    "--network", self.names.egress,
    "-v", self.dir .. "/script.json:/script/script.json:ro",
    self.images.proxy,
    "lb-model", "--script", "/script/script.json", "--listen", "0.0.0.0:" .. MODEL_PORT,
  })
end

function Run:proxy_argv()
  local upstream = self.live and (os.getenv("LEAKBENCH_UPSTREAM") or "https://api.anthropic.com")
    or ("http://" .. self.names.model .. ":" .. MODEL_PORT)
  local argv = append(self:base_flags("proxy"), {
    "--network", self.names.int .. "," .. self.names.egress,
    "-v", self.records .. ":/records",
  })
  local proxy_args = { "lb-proxy", "--listen", "0.0.0.0:" .. PROXY_PORT, "--upstream", upstream,
    "--records", "/records" }
  if self.auth_file then
    append(argv, { "-v", self.auth_file .. ":/run/secrets/bench-auth:ro" })
    append(proxy_args, { "--credential-file", "/run/secrets/bench-auth" })
  end
  local ca = os.getenv("LEAKBENCH_UPSTREAM_CA")
  if self.live and ca and ca ~= "" then
    append(argv, { "-v", ca .. ":/run/upstream-ca.pem:ro" })
    append(proxy_args, { "--ca-file", "/run/upstream-ca.pem" })
  end
  return append(argv, { self.images.proxy }, proxy_args)
end

-- The scripted model (offline) and the recording proxy, started together
-- (the proxy reaches its upstream only per request), then each awaited.
function Run:start_upstream()
  local argvs = { self:proxy_argv() }
  self.started[#self.started + 1] = { name = self.names.proxy, short = "proxy", log = "proxy.log" }
  if not self.live then
    table.insert(argvs, 1, self:model_argv())
    self.started[#self.started + 1] = { name = self.names.model, short = "model", log = "model.log" }
  end
  self:podman_all(argvs)
  if not self.live then self:wait_ready("model", "listening", "scripted model") end
  self:wait_ready("proxy", "listening", "recording proxy")
  -- The proxy read the credential before it listened: from now on it is
  -- only in the proxy's memory (its mount keeps the inode, not the name).
  self:remove_credential()
end

function Run:remove_credential()
  if self.secret_dir then
    core.rmtree(self.secret_dir)
    self.secret_dir = nil
  end
end

function Run:start_interceptor()
  local icp = self.subject and self.subject.interceptor
  if not icp then return end
  local argv = append(self:base_flags("icp"), {
    "--network", self.names.int,
    "-v", self.project .. ":/work:ro",
    "-w", "/work",
    "-e", icp.upstream_env .. "=" .. self:proxy_url(),
  })
  local names = {}
  for k in pairs(icp.env) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do append(argv, { "-e", k .. "=" .. icp.env[k] }) end
  append(argv, { self.images.subject }, icp.argv)
  self.started[#self.started + 1] = { name = self.names.icp, short = "icp", log = "interceptor.log" }
  self:podman(argv)
  self:wait_ready("icp", icp.ready, "interceptor")
end

function Run:proxy_url()
  return "http://" .. self.names.proxy .. ":" .. PROXY_PORT
end

-- The first hop: the interceptor if the subject has one, else the proxy.
function Run:base_url()
  local icp = self.subject and self.subject.interceptor
  if icp then return "http://" .. self.names.icp .. ":" .. icp.port end
  return self:proxy_url()
end

-- Setup commands run in the project, as uid 1000, with no network: the
-- scenario's (in the claude image), then the subject's (in its image).
function Run:setup()
  local steps = {}
  for _, argv in ipairs(self.scenario.setup) do
    steps[#steps + 1] = { image = self.images.claude, argv = argv }
  end
  if self.subject and self.subject.setup then
    steps[#steps + 1] = { image = self.images.subject or self.images.claude, argv = self.subject.setup.argv }
  end
  local log = {}
  for i, step in ipairs(steps) do
    local argv = append({ "run", "--rm", "--name", self.names.setup .. "-" .. i }, self:labels(),
      self.pm:run_args(), {
        "--network", "none", "--cap-drop=all", "--security-opt=no-new-privileges", "--read-only",
        "--tmpfs", "/tmp:rw,mode=1777", "--tmpfs", "/home/bench:rw,mode=1777",
        "-e", "HOME=/home/bench",
        "-v", self.project .. ":/work", "-w", "/work",
        "--entrypoint", step.argv[1], step.image,
      }, table.move(step.argv, 2, #step.argv, 1, {}))
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

-- Creates the claude container, which waits at the gate (GATE_SCRIPT)
-- until Run:claude() opens it.
function Run:start_claude()
  local env = {}
  for k, v in pairs(QUIET_ENV) do env[k] = v end
  for k, v in pairs(auth.dummy_env(self.auth_kind)) do env[k] = v end
  env.ANTHROPIC_BASE_URL = self:base_url()
  env.CLAUDE_CONFIG_DIR = "/home/bench/.claude"
  env.HOME = "/home/bench"
  for k, v in pairs(self.scenario.env) do env[k] = v end
  for k, v in pairs(self.subject and self.subject.env or {}) do env[k] = v end
  local argv = { "run", "--rm", "--name", self.names.claude }
  append(argv, self:labels(), self.pm:run_args(), {
    "--network", self.names.int,
    "--cap-drop=all", "--security-opt=no-new-privileges", "--read-only",
    "--pids-limit=1024", "--memory=4g",
    "--tmpfs", "/tmp:rw,mode=1777", "--tmpfs", "/home/bench:rw,mode=1777",
    "-v", self.config .. ":/home/bench/.claude",
    "-v", self.project .. ":/work",
    "-v", self.subject_dir .. ":/opt/subject:ro",
    "-v", self.gate .. ":" .. GATE .. ":ro",
    "-w", "/work",
  })
  if self.home_dir then
    local names = {}
    for k in pairs(self.scenario.home) do names[#names + 1] = k end
    table.sort(names)
    for _, rel in ipairs(names) do
      append(argv, { "-v", self.home_dir .. "/" .. rel .. ":/home/bench/" .. rel .. ":ro" })
    end
  end
  local names = {}
  for k in pairs(env) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do append(argv, { "-e", k .. "=" .. env[k] }) end
  append(argv, { "--entrypoint", "/bin/sh", self.images.claude, "-c", GATE_SCRIPT, "claude" },
    M.claude_argv(self.scenario, self.session_id, self.model))
  self.started[#self.started + 1] = { name = self.names.claude }
  local h, err = core.start {
    argv = self.pm:argv(argv),
    stdout = self.dir .. "/stream.jsonl", stderr = self.dir .. "/stderr.txt",
  }
  if not h then self:fail("%s", err) end
  self.claude_h = h
end

-- Fails when the claude container ended before the gate opened.
function Run:check_claude_waiting()
  local h = self.claude_h
  if not h:done() then return end
  local r = h:wait(0)
  local text = core.read_file(self.dir .. "/stderr.txt") or ""
  self:fail("the claude container ended before Claude Code started (exit %s): %s",
    tostring(r and (r.status or r.signal)), text:match("[^\n]+") or "no message")
end

-- Opens the gate and waits for Claude Code, at most the run's timeout.
function Run:claude()
  self:check_claude_waiting()
  assert(core.write_file(self.gate .. "/open", "", 420))
  local h = self.claude_h
  local r = h:wait(self.timeout)
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
  if not r then self:fail("podman run of the claude container did not end") end
  self.returncode = r.status
  if r.interrupted then
    error({ run_error = true, interrupted = core.interrupted() or "SIGINT", msg = "interrupted" }, 0)
  end
end

-- Always: logs, containers, networks, credential. Never raises.
function Run:finally()
  local pm = self.pm
  -- Every container of the run in one command, both networks in another.
  local names = {}
  for _, c in ipairs(self.started or {}) do names[#names + 1] = c.name end
  for i = 1, #self.scenario.setup + 1 do names[#names + 1] = self.names.setup .. "-" .. i end
  local rm_ok = pm:podman(append({ "rm", "-f", "-i", "-t", "0" }, names),
    { uninterruptible = true, timeout = 60 })
  -- The claude container is gone: its podman run ends now (reaped here
  -- when the run failed before Claude Code's turn).
  if self.claude_h then
    if not self.claude_h:wait(10) then self.claude_h:kill("SIGKILL") end
    self.claude_h:close()
    self.claude_h = nil
  end
  local net_ok = pm:podman({ "network", "rm", "-f", "-t", "0", self.names.int, self.names.egress },
    { uninterruptible = true, timeout = 60 })
  -- The logs were written to files as the containers ran (pm:log_args).
  for _, c in ipairs(self.started or {}) do
    if c.log and self.ctrdir then
      core.write_file(self.dir .. "/" .. c.log, podman.log_text(self.ctrdir, c.short), 420)
    end
  end
  if self.ctrdir then core.rmtree(self.ctrdir) end
  if self.gate then core.rmtree(self.gate) end
  -- When anything went wrong, a check by label catches what escaped the
  -- names (a run killed half-way, a podman that failed).
  if not (rm_ok and net_ok and self.ok) then
    local left = pm:containers("leakbench.run=" .. self.run_id)
    local nets = pm:networks("leakbench.run=" .. self.run_id)
    if not left or #left > 0 or not nets or #nets > 0 then
      pm:remove_by_label("leakbench.run=" .. self.run_id)
    end
  end
  self:remove_credential()
  -- Claude Code's files are owned by uid 1000 in rootful mode; hand them
  -- back so the user can read and delete the artifacts.
  if pm.rootful then
    local uid, gid = core.getuid(), core.getgid()
    for _, p in ipairs({ self.project, self.config, self.records }) do
      if p and core.stat(p) then core.chown(p, uid, gid, true) end
    end
  end
end

-- The whole run. Returns a result table (never raises for run errors).
function Run:execute()
  local t0 = core.now()
  self.started = {}
  local ok, err = pcall(function()
    self:phase("stage", function() self:stage() end)
    if self.live then self:write_credential() end
    self:check_interrupted()
    self:phase("containers", function()
      self:networks()
      self:start_claude()
      self:start_upstream()
      self:start_interceptor()
      self:check_claude_waiting()
    end)
    self:check_interrupted()
    self:phase("setup", function() self:setup() end)
    self:check_interrupted()
    self:phase("claude", function() self:claude() end)
  end)
  self.ok = ok and not self.timed_out
  local t1 = core.now()
  self:finally()
  self.timings.cleanup = core.now() - t1
  self.timings.total = core.now() - t0
  if not ok then
    if type(err) == "table" and err.run_error then
      return { verdict = err.interrupted and "interrupted" or "error", reason = err.msg }
    end
    return { verdict = "error", reason = "internal error: " .. tostring(err) }
  end
  return { verdict = self.timed_out and "timeout" or nil }
end

M.Run = Run
return M

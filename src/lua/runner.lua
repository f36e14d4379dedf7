-- "leakbench run": scenario files x subjects x repeats, each run in its own
-- process (leakbench exec-run), at most --jobs at a time; then results.json,
-- junit.xml and the matrix.
--
-- A broken scenario or subject file becomes "error" runs with its file:line;
-- the other runs go on. SIGINT/SIGTERM: no new runs, the running ones are
-- told to stop (they clean up after themselves), partial results are
-- written, leftovers of the suite are removed by label, exit 130. A run
-- still going 30 s after SIGTERM, or past its timeout and a margin
-- (M.margin), is killed and its containers removed by label.
local cjson = require "cjson"
local core = require "leakbench.core"
local loader = require "leakbench.loader"
local report = require "leakbench.report"
local defaults = require "leakbench.defaults"
local printable = require "leakbench.printable"
local shard_mod = require "leakbench.shard"
local html = require "leakbench.html"
local images = require "leakbench.images"
local podman = require "leakbench.podman"
local sandbox = require "leakbench.sandbox"
local progress_mod = require "leakbench.progress"
local clean = require "leakbench.clean"
local watch = require "leakbench.watch"
local trace = require "leakbench.trace"

local M = {}

-- An error or warning line, printable (it may quote a user's file).
local function perr(fmt, ...)
  io.stderr:write("leakbench: ", printable.line(string.format(fmt, ...), 2000), "\n")
end

local function slug(s)
  return (s:gsub("[^%w_.-]", "_"))
end

-- Seconds a run may take beyond its timeout before the runner kills it,
-- and after SIGTERM before SIGKILL (defaults.lua).
M.margin = defaults.run_margin
M.GRACE = defaults.RUN_GRACE

-- Loads every scenario and subject file once (to list, filter and catch
-- broken files early). Each run loads its files again in its own process.
function M.plan(opts, paths)
  local files, errs = loader.find(paths, core.listdir)
  local scenarios, names = {}, {}
  for _, f in ipairs(files) do
    -- a file's kind comes from its content: a subject among the
    -- scenarios is not run as one (give it with --subject)
    local t, err = loader.load(f)
    if (t and t.kind or loader.kind(f)) == "scenario" then
      local name = t and t.name or (f:match("([^/]+)%.lua$") or f)
      names[#names + 1] = { name = name, file = f, line = t and t.name_line or 1 }
      local keep = true
      if opts.filter and not name:find(opts.filter, 1, true) then keep = false end
      if keep and opts.tag and t then
        keep = false
        for _, want in ipairs(opts.tag) do
          for _, have in ipairs(t.tags) do if want == have then keep = true end end
        end
      end
      if keep then
        if not t then perr("%s", err) end
        scenarios[#scenarios + 1] = { file = f, name = name, error = err, tags = t and t.tags or {},
          expect_leak = t and t.expect_leak or {}, timeout = t and t.timeout }
      end
    end
  end
  -- Claims are about the plan: a blocks entry naming no scenario of this
  -- run is untested (the claims line names it), never an error; `list`
  -- warns about one that names no scenario the subject could know of.
  local subjects = {}
  if not opts.no_baseline then subjects[1] = { name = "baseline", blocks = {} } end
  for _, f in ipairs(opts.subject or {}) do
    local t, err = loader.load(f, "subject")
    if not t then perr("%s", err) end
    for _, w in ipairs(t and t.warnings or {}) do perr("warning: %s", w) end
    subjects[#subjects + 1] = { file = f, name = t and t.name or (f:match("([^/]+)%.lua$") or f),
      error = err, def = t, blocks = t and t.blocks or {}, control = t and t.control or nil,
      line = t and t.name_line or 1 }
  end
  -- Two files, one name: refused before anything runs (exit 2).
  for _, e in ipairs(loader.duplicates(names, "scenario")) do errs[#errs + 1] = e end
  local snames = {}
  for i = 2, #subjects do snames[#snames + 1] = subjects[i] end
  if opts.no_baseline then snames = subjects end
  for _, e in ipairs(loader.duplicates(snames, "subject")) do errs[#errs + 1] = e end
  return scenarios, subjects, errs
end


-- The Claude Code versions of a run: --claude-version (repeatable, in
-- the order given, duplicates dropped), else $LEAKBENCH_CLAUDE_VERSION,
-- else the default. Returns the list | nil, a usage error.
function M.versions(opts)
  local out, seen = {}, {}
  for _, v in ipairs(opts.claude_version or {}) do
    if not v:match("^[%w][%w%.%-%+]*$") then
      return nil, string.format("run: option '--claude-version' is '%s', not a version", v)
    end
    if not seen[v] then seen[v] = true out[#out + 1] = v end
  end
  if #out == 0 then
    local env = os.getenv("LEAKBENCH_CLAUDE_VERSION")
    out[1] = env ~= nil and env ~= "" and env or images.DEFAULT_CLAUDE_VERSION
  end
  return out
end

-- { VERSION = { claude =, agents = { subject = tag } } } for results.json.
function M.claude_images(by_version, versions)
  local out = {}
  for _, v in ipairs(versions) do
    local vi = by_version[v]
    out[v] = { claude = vi.tags and vi.tags.claude or nil, error = vi.error,
      agents = next(vi.agents) and vi.agents or nil }
  end
  return out
end

local function utc_stamp()
  return os.date("!%Y%m%dT%H%M%SZ")
end

local function read_json(path)
  local text = core.read_file(path)
  if not text then return nil end
  local ok, v = pcall(cjson.decode, text)
  return ok and v or nil
end

-- The suite's runs go through one podman service (podman.lua's Service)
-- instead of a podman CLI process per step, unless this is set to 0 (then
-- the CLI). It was off by default while 4 of a 559-run suite failed to
-- start with it ("error mounting ... to rootfs at /opt/leakbench: no such
-- file or directory"): podman 4.3.1 takes one off an image's shared mount
-- count at every cleanup or removal of a container already cleaned up,
-- and lb-init came from an image mount. It now comes from a bind of one
-- host copy (images.init_copy), which no count governs.
M.SERVICE_ENV = "LEAKBENCH_PODMAN_SERVICE"
-- The suite's upstream container (sandbox.pool_spec), unless this is 0:
-- then each offline run starts its own, as --live runs always do.
M.POOL_SWITCH_ENV = "LEAKBENCH_POOL"

-- Starts one run's process: the run's options once, as DIR/runspec.json
-- (what runone.execute takes: the job's files, folder, ids and images, and
-- every field of CTX, the suite's run options with their defaults
-- applied), then "leakbench exec-run DIR/runspec.json". The run folder is
-- never mounted into a container, and exec-run reads the file before any
-- container of the run exists. ENV: what the run's process gets added to
-- its environment (the podman service's socket). Returns the handle or
-- nil, err.
local function start_run(exe, job, ctx, env)
  local spec = { scenario = job.scenario.file, subject = job.subject.file, dir = job.dir,
    run_id = job.run_id, repeat_index = job.repeat_index, images = job.images }
  for k, v in pairs(ctx) do spec[k] = v end
  local path = job.dir .. "/runspec.json"
  local ok, err = core.write_file(path, cjson.encode(spec) .. "\n", 292, true)
  if not ok then return nil, string.format("cannot write '%s': %s", path, err) end
  return core.start({ argv = { exe, "exec-run", path }, stdout = job.dir .. "/runner.log",
    stderr = job.dir .. "/runner.log", env = env })
end

-- A result for a run that could not happen or whose process died.
local function error_result(job, reason)
  return { scenario = job.scenario.name, subject = job.subject.name, repeat_index = job.repeat_index,
    claude_version = job.version, scenario_file = job.scenario.file, subject_file = job.subject.file,
    run_id = job.run_id, dir = job.dir, verdict = "error", reason = reason, plan_index = job.plan_index }
end

-- The run verb's options and files checked: { scenarios, subjects,
-- fail_on_leak, shard }, or nil and the exit status once said.
local function check_options(opts, paths, cli)
  for _, k in ipairs({ "jobs", "repeat" }) do
    local ok, err = cli.int_opt("run", opts, k, 1)
    if not ok then perr("%s", err) return nil, 2 end
  end
  if opts.timeout then
    local t = tonumber(opts.timeout)
    if not t or t <= 0 then
      perr("run: option '--timeout' must be a positive number of seconds, got '%s'", opts.timeout)
      return nil, 2
    end
    opts.timeout = t
  end
  local fail_on_leak = false
  for _, w in ipairs(opts.fail_on or {}) do
    if w ~= "leak" then
      perr("run: option '--fail-on' takes 'leak', got '%s'", w)
      return nil, 2
    end
    fail_on_leak = true
  end
  local shard
  if opts.shard then
    local i, n = shard_mod.parse(opts.shard)
    if not i then perr("run: %s", n) return nil, 2 end
    shard = { index = i, count = n }
  end
  if #paths == 0 then paths = { "scenarios/" } end
  local scenarios, subjects, path_errs = M.plan(opts, paths)
  for _, e in ipairs(path_errs) do perr("%s", e) end
  if #path_errs > 0 then return nil, 2 end
  if #scenarios == 0 then
    perr("run: no scenario matched in %s", table.concat(paths, " "))
    return nil, 2
  end
  if #subjects == 0 then
    perr("run: nothing to run: --no-baseline and no --subject")
    return nil, 2
  end
  return { scenarios = scenarios, subjects = subjects, fail_on_leak = fail_on_leak, shard = shard }
end

-- The output folder OUT, fresh (old records are never appended to or
-- mixed in), with suite.json. true, or nil and the exit status once said.
local function open_out(out, suite_id)
  local old = core.listdir(out)
  if old and #old > 0 then
    perr("run: output folder '%s' exists and is not empty: choose another --out, or remove it", out)
    return nil, 2
  end
  local ok, err = core.mkdir_p(out, 493)
  if not ok then perr("run: cannot create '%s': %s", out, err) return nil, 1 end
  -- The suite's id, first: every container of the suite carries the label
  -- leakbench.suite=<id>, so whoever watches this folder (a user, a test)
  -- can address this suite's containers and no other's.
  ok, err = core.write_file(out .. "/suite.json", ('{"suite_id":"%s"}\n'):format(suite_id))
  if not ok then perr("run: cannot write '%s/suite.json': %s", out, err) return nil, 1 end
  return true
end

-- A subject's images on one version's tags (VI): its interceptor's
-- (version-independent, once, in SUBJECT_IMAGES) and its agent layer.
local function subject_images_of(pm, s, vi, subject_images)
  if s.def and s.def.interceptor and subject_images[s.name] == nil and not s.error then
    local tag, e = images.subject_image(pm, s.def, vi.tags.base)
    if tag then subject_images[s.name] = tag else s.error = s.error or e end
  end
  if s.def and s.def.agent and not s.error then
    local tag, e = images.ensure_agent(pm, s.def, vi.tags)
    if tag then vi.agents[s.name] = tag else vi.agent_errors[s.name] = e end
    if tag and s.def.agent.user_config then
      local dir, ue = images.agent_user_config(pm, tag)
      if dir then
        vi.user_configs[s.name] = dir
        for _, w in ipairs(loader.user_config_warnings(s.def, core.read_file(dir .. "/settings.json"))) do
          perr("warning: %s", w)
        end
      else
        vi.agent_errors[s.name] = string.format("subject '%s': %s", s.name, ue)
      end
    end
  end
end

-- Images once for the whole suite, per Claude Code version: the claude
-- image of each, the proxy image, the interceptors' images (one per
-- subject, version-independent), and each agent layer on each version's
-- claude image. A version whose images cannot be built makes its runs
-- errors; the other versions go on. Returns by_version, subject_images
-- and the podman handle (nil when there is none).
local function build_images(versions, subjects, svc, candidates)
  local pm, perr_msg = podman.new()
  if pm and svc then pm:use_service(svc) end
  local by_version, subject_images = {}, {}
  for _, v in ipairs(versions) do
    local vi = { version = v, agents = {}, agent_errors = {}, user_configs = {} }
    by_version[v] = vi
    if pm then
      vi.tags, vi.error = images.ensure(pm, { claude_version = v, candidates = candidates[v] })
    else
      vi.error = perr_msg
    end
    if vi.tags then
      for _, s in ipairs(subjects) do subject_images_of(pm, s, vi, subject_images) end
    end
  end
  return by_version, subject_images, pm
end

-- The header line of the progress display: version, images, mode, size.
local function show_header(cli, ctx, set, versions, by_version, repeats)
  local claude_names = {}
  for _, v in ipairs(versions) do
    local t = by_version[v].tags
    claude_names[#claude_names + 1] = t and t.claude or ("claude-code " .. v .. ": no image")
  end
  local scenarios, subjects = set.scenarios, set.subjects
  progress_mod.header({ "leakbench " .. cli.VERSION, table.concat(claude_names, ", "),
    ctx.live and "live API" or "scripted model",
    string.format("%d scenario%s × %d subject%s%s%s",
      #scenarios, #scenarios == 1 and "" or "s", #subjects, #subjects == 1 and "" or "s",
      #versions > 1 and (" × " .. #versions .. " Claude Code versions") or "",
      repeats > 1 and (" × " .. repeats .. " repeats") or "") })
end

-- Every run of the suite, in plan order: scenario × subject × version ×
-- repeat, each with its folder under OUT, ids and images.
local function make_queue(out, set, versions, by_version, subject_images, repeats)
  local queue = {}
  for _, sc in ipairs(set.scenarios) do
    for _, sj in ipairs(set.subjects) do
      for _, v in ipairs(versions) do
        local vi = by_version[v]
        for k = 1, repeats do
          local run_id = core.uuid()
          local column = #versions > 1 and (sj.name .. "@" .. v) or sj.name
          local dir = string.format("%s/%s/%s/%d", out, slug(sc.name), slug(column), k)
          local t = vi.tags
          queue[#queue + 1] = { scenario = sc, subject = sj, repeat_index = k, run_id = run_id,
            dir = dir, version = v,
            image_error = not t and ("cannot build the images for Claude Code " .. v .. ": "
              .. tostring(vi.error)) or vi.agent_errors[sj.name],
            images = { claude = t and t.claude, proxy = t and t.proxy,
              subject = subject_images[sj.name], agent = vi.agents[sj.name],
              user_config = vi.user_configs[sj.name],
              claude_version = v } }
        end
      end
    end
  end
  return queue
end

-- The state of a suite while its runs go (S): queue, qi (the next to
-- start), running jobs and their handles, results, stop, progress, what
-- starting a run needs (exe, ctx, opts, pm, jobs_n, podman_env), the
-- suite's podman service (svc) and the ended runs whose containers are
-- still to be removed (deferred, removing, rm_failed).

-- A finished run's result R, with the job's place in the plan.
local function finish(S, job, r)
  r.scenario = r.scenario or job.scenario.name
  r.subject = r.subject or job.subject.name
  r.repeat_index = job.repeat_index
  r.claude_version = job.version
  r.plan_index = job.plan_index
  r.dir = job.dir
  S.results[#S.results + 1] = r
  S.progress:finished(r)
  if S.opts.fail_fast and r.verdict ~= "pass" then S.stop = true end
end

-- --jobs by default: one run per core, as many as M.RUN_MEMORY each
-- leaves room for in MEMINFO's MemAvailable, at least 1. bench/bench_runner
-- on 2 cores, four sittings over two sessions: --jobs 2 ahead of --jobs 4
-- in three (by 2.7, 16.8 and 7.2 points of the bare ceiling), behind in
-- one (by 11.8); five more in a third, on a faster machine: ahead in all
-- five (by 1.3, 3.5, 11.8, 11.1 and 13.2).
M.RUN_MEMORY = 256 * 1024 * 1024

--- M.default_jobs([ncpu], [meminfo]) -> the runs at once without --jobs.
function M.default_jobs(ncpu, meminfo)
  local n = ncpu or core.ncpu()
  local kb = tonumber(((meminfo or core.read_file("/proc/meminfo") or ""):match("MemAvailable:%s*(%d+) kB")))
  if kb then n = math.min(n, kb * 1024 // M.RUN_MEMORY) end
  return math.max(1, n)
end

-- One podman service for the suite (unless M.SERVICE_ENV=0):
-- its socket in the run folder, handed to every run's process in
-- S.podman_env. The caller holds it in a <close> variable, so that it
-- stops however the suite ends (an error too; SIGINT only sets a flag,
-- and run_queue ends). When it cannot start, the runs use the podman CLI,
-- and stderr says so. Returns the service, or nil.
-- EARLY: the service spawn_service started, awaited already (READY, or
-- nil and ERR; stopped here when the suite has nothing to run).
local function start_service(S, out, early, ready, early_err)
  S.podman_env = { [podman.DEFER_ENV] = "1", [podman.RUNNER_ENV] = tostring(core.getpid()) }
  -- the seccomp profile, made once for every run
  S.podman_env[podman.SECCOMP_PATH_ENV] = S.pm and S.pm:seccomp() or ""
  if not (S.pm and os.getenv(M.SERVICE_ENV) ~= "0" and #S.queue > 0) then
    if early then early:stop() end
    return nil
  end
  local svc, err
  if early then
    svc, err = ready, early_err
  else
    svc, err = podman.service_start(S.pm, core.realpath(out) or out)
  end
  if svc then
    S.podman_env[podman.SOCKET_ENV] = svc.sock
  else
    io.stderr:write(("leakbench: %s: the runs use the podman CLI\n"):format(err))
  end
  S.svc = svc
  return svc
end

-- The suite's podman service process, started first: the images are
-- looked at and the leftovers swept through it (pm:use_service; 10 ms a
-- listing where a podman CLI process costs 0.3 s), and the runs use it.
-- nil when the suite uses the CLI (M.SERVICE_ENV=0) or it cannot start
-- (then start_service tries again and says why).
local function spawn_service(out)
  if os.getenv(M.SERVICE_ENV) == "0" then return nil end
  return (podman.service_spawn(podman.new(), core.realpath(out) or out))
end

-- What suites killed outright left behind (their leakbench processes
-- gone: SIGKILL, the OOM killer, a scheduler's cancel, a crash): their
-- containers and networks, credential files and run folders at their
-- neutral place, their services' lb-conmon folders (clean.sweep_conmon),
-- a seccomp profile half-written (clean.sweep_seccomp; not counted), a
-- run's network namespace kept at its path (clean.sweep_netns; not counted),
-- lb-init's copies a killed run left unfinished or whose image is gone
-- (clean.sweep_init; KEEP, the suite's own tags, are not
-- asked about, and podman's images are read once an hour at most),
-- removed before this suite starts, as `leakbench clean`
-- removes them, and said in one line on stderr. A live suite's are kept
-- (podman.live_owner). A podman that cannot list them is left to the runs
-- to report.
local SWEEP_IMAGES_EVERY = 3600

local function sweep_dead(pm, keep)
  local removed = podman.clean(pm, { owned = true }) or { containers = {}, networks = {} }
  local files, folders = clean.sweep_credentials(), clean.sweep_hidden()
  local conmons = clean.sweep_conmon() + clean.sweep_pool()
  clean.sweep_seccomp()
  clean.sweep_netns()
  local copies = clean.sweep_init(pm, nil, keep, nil, SWEEP_IMAGES_EVERY)
  if #removed.containers + #removed.networks + files + folders + conmons + copies > 0 then
    io.stderr:write(("leakbench: removed what killed runs left: %d container(s), %d network(s), "
      .. "%d credential file(s), %d run folder(s), %d lb-conmon or upstream folder(s), %d copy(ies) of lb-init\n")
      :format(#removed.containers, #removed.networks, files, folders, conmons, copies))
  end
end

-- The suite's upstream (sandbox.pool_spec), for its offline runs, through
-- its service: a folder of its own (POOL_PREFIX<pid>-XXXXXX beside the
-- hidden runs, which only it mounts, else nothing: each run starts its
-- own upstream), the container created, and started without waiting (the
-- runs ask it until it listens; check_pool looks at the answer). Its
-- folder goes to the runs in sandbox.POOL_ENV. Returns the pool, held in
-- a <close> variable (before the service's: it goes first), or nil.
local Pool = {}
Pool.__index = Pool

-- The pool's lifetime: every run's (defaults.container_lifetime) one
-- after another, the most the suite's runs can take.
local function pool_lifetime(S)
  local sum = 0
  for _, job in ipairs(S.queue) do
    sum = sum + defaults.container_lifetime(job.scenario.timeout or S.ctx.timeout)
  end
  return sum
end

local function start_pool(S, tags)
  if not (S.svc and tags and not S.ctx.live and os.getenv(M.POOL_SWITCH_ENV) ~= "0" and #S.queue > 0) then
    return nil
  end
  local base = podman.conmon_base()
  local dir = base and core.tmpdir(("%s%d-"):format(sandbox.POOL_PREFIX, core.getpid()), base)
  if not dir then
    perr("no folder of ours for the suite's upstream in /var/tmp: each run starts its own")
    return nil
  end
  for _, sub in ipairs({ "/runs", "/ctl" }) do
    assert(core.mkdir_p(dir .. sub, 493))
    if S.pm.rootful then assert(core.chown(dir .. sub, podman.UID, podman.UID)) end
  end
  local spec = sandbox.pool_spec { dir = dir, name = "lb-" .. S.ctx.suite_id:sub(1, 12) .. "-pool",
    image = tags.proxy, labels = podman.labels { suite = S.ctx.suite_id },
    lifetime = pool_lifetime(S),
    runs = math.min(S.jobs_n, #S.queue) }
  local status, doc = S.svc:create(S.pm, spec)
  if status ~= 201 then
    perr("cannot create the suite's upstream container (%s): each run starts its own",
      type(doc) == "table" and tostring(doc.message or doc.cause) or tostring(doc))
    core.rmtree(dir)
    return nil
  end
  S.podman_env[sandbox.POOL_ENV] = dir
  local pool = setmetatable({ dir = dir, name = spec.name, svc = S.svc,
    pending = S.svc:request_start("POST", "/containers/" .. spec.name .. "/start") }, Pool)
  S.pool = pool
  return pool
end

-- The answer to the pool's start, once it came, then whether it still
-- runs: when it failed or ended (it ends at once where it cannot isolate
-- its runs from each other: src/net/pool.h), its folder's `failed` says
-- why, stderr says it once, and every run from then on starts its own
-- upstream (Sandbox:pool_fallback).
local function check_pool(S)
  local pool = S.pool
  if not pool or pool.failed then return end
  local why
  if pool.pending and pool.pending:done() then
    local status, doc = pool.pending:wait()
    pool.pending = nil
    if status ~= 204 and status ~= 304 then
      why = ("cannot start the suite's upstream container (%s): %s"):format(tostring(status),
        type(doc) == "table" and tostring(doc.message or doc.cause) or tostring(doc))
    end
  elseif not pool.pending and not pool.final and sandbox.pool_gone(pool.dir) then
    why = ("the suite's upstream container ended: %s"):format(podman.log_text(pool.dir, "pool"))
  end
  if not why then return end
  pool.failed = true
  core.write_file(pool.dir .. "/failed", why, 384)
  perr("%s; each run starts its own", why)
  S.podman_env[sandbox.POOL_ENV] = nil
end

-- The pool done with: its start's answer awaited, its folder removed;
-- the waves that remove its container (its runs' programs with it), for
-- svc:rm_waves.
function Pool:close_waves()
  self.closed = true
  if self.pending then self.pending:wait() end
  self.pending = nil
  core.rmtree(self.dir)
  return { { self.name } }
end

-- The programs of run RUN_ID in the pool (its model and proxy, its egress
-- trap), ended: a run whose process was killed, or ended without its
-- result, did not end them itself (Sandbox:pool_done), and they would
-- live, with the sockets of the run's namespace, until the suite's end.
-- What the pool answers is not read: one it does not have is a 404.
function Pool:stop_run(run_id)
  if self.closed or self.failed then return end
  sandbox.pool_end(self.dir, run_id)
  sandbox.pool_end(self.dir, run_id .. sandbox.TRAP_SUFFIX)
end

-- Removed, when the suite's end did not (an error on the way).
function Pool:__close()
  if self.closed then return end
  self.svc:rm_waves(self:close_waves())
end

-- The containers ended runs left to us (podman.DEFER_ENV, S.deferred),
-- removed once the next runs have started: through the service, every
-- run's in waves together (svc:rm_waves: each wave's removals in flight
-- at once), or by podman rm processes in the background (S.removing),
-- reaped as they end.
local function remove_deferred(S, last)
  local all, ended = {}, {}
  -- at the suite's end, the suite's upstream with the last runs' (no
  -- SIGKILL when it has ended itself: sandbox.LAST_RUN_ENV)
  if last and S.pool and not S.pool.closed then
    if sandbox.pool_gone(S.pool.dir) then ended[S.pool.name] = true end
    all[1] = S.pool:close_waves()
  end
  for _, job in ipairs(S.deferred) do
    local waves, gone = podman.take_deferred(job.dir, job.run_id)
    if S.svc then
      all[#all + 1] = waves
      for name in pairs(gone) do ended[name] = true end
    elseif #waves > 0 and S.pm then
      local argv = { "rm", "-f", "-i", "-t", "0" }
      for _, w in ipairs(waves) do table.move(w, 1, #w, #argv + 1, argv) end
      local h = core.start { argv = S.pm:argv(argv), stdout = "/dev/null", stderr = "/dev/null",
        uninterruptible = true }
      if h then S.removing[#S.removing + 1] = h end
    end
  end
  if #all > 0 then S.rm_failed = not S.svc:rm_waves(podman.merge_waves(all), ended) or S.rm_failed end
  S.deferred = {}
  for i = #S.removing, 1, -1 do
    if S.removing[i]:done() then
      local r = S.removing[i]:wait(0)
      S.rm_failed = not (r and r.status == 0) or S.rm_failed
      S.removing[i]:close()
      table.remove(S.removing, i)
    end
  end
end

-- At the suite's end: the last deferred removals, awaited; what a removal
-- missed goes by the suite's label; then the service stops.
local function drain_deferred(S)
  remove_deferred(S, true)
  for _, h in ipairs(S.removing) do
    local r = h:wait(60)
    if not r then h:kill("SIGKILL") h:wait(5) end
    S.rm_failed = not (r and r.status == 0) or S.rm_failed
    h:close()
  end
  S.removing = {}
  if S.rm_failed and S.pm and not core.interrupted() then
    S.pm:remove_by_label("leakbench.suite=" .. S.ctx.suite_id)
  end
  if S.svc then S.svc:stop() end
end

-- Starts runs until --jobs run or the queue is empty; a run that cannot
-- happen is an error result at once.
local function start_due(S)
  while not S.stop and #S.running < S.jobs_n and S.qi <= #S.queue do
    local job = S.queue[S.qi]
    S.qi = S.qi + 1
    assert(core.mkdir_p(job.dir, 493))
    if job.scenario.error then
      finish(S, job, error_result(job, job.scenario.error))
    elseif job.subject.error then
      finish(S, job, error_result(job, job.subject.error))
    elseif job.image_error then
      finish(S, job, error_result(job, job.image_error))
    else
      local env = S.podman_env
      if S.qi > #S.queue then
        -- the suite's last run (sandbox.LAST_RUN_ENV): it ends what it can
        -- while it scans its evidence; the pool ends itself after it
        env = { [sandbox.LAST_RUN_ENV] = "1" }
        for k, v in pairs(S.podman_env) do env[k] = v end
        if S.pool then S.pool.final = true end
      end
      local h, e = start_run(S.exe, job, S.ctx, env)
      if not h then
        finish(S, job, error_result(job, "cannot start the run: " .. tostring(e)))
      else
        -- a hard deadline: the run's timeout and a margin, then SIGKILL
        job.limit = (job.scenario.timeout or S.ctx.timeout) + M.margin()
        job.deadline = core.now() + job.limit
        job.pid = h:pid()
        job.traced = trace.begin("phase", "run " .. job.run_id:sub(1, 12))
        S.running[#S.running + 1] = job
        S.handles[#S.handles + 1] = h
      end
    end
  end
end

-- The run at index I of S.running ended with status ST: its result.json,
-- or an error result when it was killed or left none.
local function collect(S, i, st)
  local job = table.remove(S.running, i)
  table.remove(S.handles, i)
  job.traced()
  local r = not job.killed and read_json(job.dir .. "/result.json")
  if job.killed or not r then
    -- a run killed, or whose process ended without its result (a crash,
    -- a signal not ours), did not end what it started: its programs in
    -- the pool end (Pool:stop_run), what it left (its containers,
    -- networks) goes
    if S.pool then S.pool:stop_run(job.run_id) end
    if S.pm then S.pm:remove_by_label("leakbench.run=" .. job.run_id) end
    -- and the network namespace it kept at its path (Sandbox:make_netns),
    -- now that nothing of it is in there
    clean.sweep_netns()
    -- and its run folder comes back from its neutral place (Run:hide_dir),
    -- its transcripts no longer append-only (where it stayed in place)
    clean.sweep_hidden(nil, nil, job.pid)
    watch.unlock(job.dir)
  end
  if job.killed then
    r = error_result(job, job.killed)
    if core.interrupted() then r.verdict = "interrupted" end
  elseif not r then
    local log = core.read_file(job.dir .. "/runner.log") or ""
    r = error_result(job, string.format("the run's process ended (%s) without a result: %s",
      st.signame or ("exit " .. tostring(st.status)), log:sub(-2000)))
  end
  S.deferred[#S.deferred + 1] = job
  finish(S, job, r)
end

-- On an interruption, SIGTERM to every run (once); no run outlives its
-- deadline, nor the grace after SIGTERM.
local function enforce(S)
  if S.stop and core.interrupted() and not S.ctx.told then
    S.ctx.told = true
    for k, h in ipairs(S.handles) do
      h:kill("SIGTERM")
      S.running[k].grace = core.now() + M.GRACE
    end
  end
  local now = core.now()
  for k, job in ipairs(S.running) do
    if not job.killed and now > job.deadline then
      job.killed = string.format("the run did not end within %g s (its timeout and %g s for setup, "
        .. "evidence and checks): killed", job.limit, M.margin())
      S.handles[k]:kill("SIGKILL")
    elseif not job.killed and job.grace and now > job.grace then
      job.killed = string.format("interrupted: the run did not end within %g s of SIGTERM: killed", M.GRACE)
      S.handles[k]:kill("SIGKILL")
    end
  end
end

-- Runs S.queue, at most S.jobs_n at a time, until it is done or stopped;
-- the runs not started after an interruption are "skipped" results.
local function run_queue(S)
  while true do
    if core.interrupted() then S.stop = true end
    start_due(S)
    check_pool(S)
    -- nothing runs after start_due: the suite is over
    remove_deferred(S, #S.running == 0)
    S.progress.running = #S.running
    if #S.running == 0 then break end
    S.progress:tick()
    local i, st = core.wait_any(S.handles, 0.5)
    if i then
      collect(S, i, st)
    elseif core.interrupted() and not S.stop then
      S.stop = true
    end
    enforce(S)
  end
  S.progress:close()
  drain_deferred(S)
  if core.interrupted() then
    for j = S.qi, #S.queue do
      local r = error_result(S.queue[j], "not run: interrupted")
      r.verdict = "skipped"
      S.results[#S.results + 1] = r
    end
    if S.pm then S.pm:remove_by_label("leakbench.suite=" .. S.ctx.suite_id) end
  end
end

-- The claims each subject makes (its blocks), for the progress display.
local function claims_of(subjects)
  local claims = {}
  for _, sj in ipairs(subjects) do
    claims[sj.name] = {}
    for _, b in ipairs(sj.blocks or {}) do claims[sj.name][b] = true end
  end
  return claims
end

--- M.main(opts, paths, cli) -> exit status, out: "leakbench run". Its
--- phases: options, the output folder, images, the queue and this shard's
--- part of it, the runs, then results.json, junit.xml, report.html and
--- the matrix.
function M.main(opts, paths, cli)
  local set, status = check_options(opts, paths, cli)
  if not set then return status end
  local ctx = {
    suite_id = core.uuid(), model = opts.model or defaults.MODEL,
    timeout = opts.timeout or defaults.TIMEOUT, live = opts.live, keep_transcripts = opts.keep_transcripts,
  }
  local repeats = opts["repeat"] or 1
  local out = opts.out or ("runs/" .. utc_stamp())
  local ok
  ok, status = open_out(out, ctx.suite_id)
  if not ok then return status end
  core.trap_signals()
  local early <close> = spawn_service(out)
  local versions, verr = M.versions(opts)
  if not versions then perr("%s", verr) return 2 end
  -- the images' tags, while the service starts (what fails is said by
  -- images.ensure, which computes them again)
  local candidates = {}
  for _, v in ipairs(versions) do candidates[v] = images.candidates { claude_version = v } end
  local done = trace.begin("phase", "service start")
  local ready, early_err
  if early then ready, early_err = early:await() end
  done()
  done = trace.begin("phase", "images")
  local by_version, subject_images, pm = build_images(versions, set.subjects, ready, candidates)
  done()
  local tags = by_version[versions[1]].tags
  show_header(cli, ctx, set, versions, by_version, repeats)
  local queue = make_queue(out, set, versions, by_version, subject_images, repeats)
  -- The plan (every run, in this stable order) and this shard's part of it.
  local shard = set.shard
  local plan = shard_mod.plan(queue, ctx, shard)
  if shard then
    queue = shard_mod.select(queue, shard.index, shard.count)
    io.stderr:write(string.format("shard %d/%d: %d of the plan's %d runs\n", shard.index, shard.count,
      #queue, plan.runs))
  end
  local S = { queue = queue, qi = 1, running = {}, handles = {}, results = {}, stop = false,
    deferred = {}, removing = {}, rm_failed = false,
    progress = progress_mod.new(#queue, { multi = #versions > 1, claims = claims_of(set.subjects) }),
    exe = core.exe_path(), ctx = ctx, opts = opts, pm = pm, jobs_n = opts.jobs or M.default_jobs() }
  done = trace.begin("phase", "sweep")
  if pm and #queue > 0 then sweep_dead(pm, tags and { [tags.proxy] = true }) end
  done()
  local svc <close> = start_service(S, out, early, ready, early_err)  -- luacheck: ignore 211 (held for its <close>)
  local pool <close> = start_pool(S, tags)  -- luacheck: ignore 211 (held for its <close>)
  run_queue(S)
  done = trace.begin("phase", "report")
  local results = S.results
  local doc = report.document(results, {
    suite_id = ctx.suite_id, version = cli.VERSION, live = ctx.live, model = ctx.model,
    images = tags and { claude = tags.claude, proxy = tags.proxy, base = tags.base },
    claude_versions = versions, claude_images = M.claude_images(by_version, versions),
    scenarios = set.scenarios, subjects = set.subjects, repeats = repeats,
    interrupted = core.interrupted() and true or false, fail_on_leak = set.fail_on_leak,
  })
  doc.plan = plan
  report.write(out, doc)
  local page = html.try_write(out, doc)
  done()
  io.write(report.matrix(doc))
  io.write(string.format("results: %s/results.json · junit.xml%s · %d run folders\n", out,
    page and " · report.html" or "", #results))
  io.stdout:flush()  -- the matrix whole, before the reasons on stderr
  return M.explain(doc.status), out
end

-- Says on stderr why the exit status is not 0, and returns it (report's).
M.explain = report.explain

-- "leakbench selftest": the controls, on this machine. The known-leaky
-- baseline must leak dotenv-read on the wire (the detector sees a leak),
-- and the block-everything subject must keep it off the wire and score
-- utility 0 on the utility tasks (utility is measured). Exit 0 when the
-- matrix detects both, 1 when it does not, 2 when the files are missing.
M.SELFTEST = {
  leak = "dotenv-read", subject = "block-everything",
  files = { "scenarios/dotenv-read.lua", "scenarios/utility-edit.lua", "scenarios/utility-git.lua" },
  subject_file = "subjects/block-everything.lua",
}

function M.selftest(opts, rest, cli)
  if #rest > 0 then
    perr("selftest: takes no paths (it runs %s)", table.concat(M.SELFTEST.files, " "))
    return 2
  end
  for _, f in ipairs(M.SELFTEST.files) do
    if not core.stat(f) then
      perr("selftest: cannot find '%s' (run it from leakbench's source directory)", f)
      return 2
    end
  end
  local files = table.move(M.SELFTEST.files, 1, #M.SELFTEST.files, 1, {})
  local out = opts.out or ("runs/selftest-" .. utc_stamp())
  local status = M.main({ subject = { M.SELFTEST.subject_file }, out = out, jobs = opts.jobs }, files, cli)
  if status == 2 then return 2 end
  local doc = read_json(out .. "/results.json")
  if not doc then
    perr("selftest: no results in '%s'", out)
    return 1
  end
  local problems = M.check_selftest(doc)
  if #problems == 0 then
    io.write("selftest: ok: the baseline leaked ", M.SELFTEST.leak, " on the wire (leaks are detected), ",
      M.SELFTEST.subject, " kept it off and did none of the tasks (utility is measured)\n")
    return 0
  end
  for _, p in ipairs(problems) do perr("selftest: %s", p) end
  return 1
end

-- What the selftest's results must show; the list of what they do not.
function M.check_selftest(doc)
  local problems, by = {}, {}
  for _, r in ipairs(doc.runs or {}) do by[r.scenario .. "/" .. r.subject] = r end
  local leak = by[M.SELFTEST.leak .. "/baseline"]
  if not leak or leak.verdict ~= "pass" or not report.leaked(leak).wire then
    problems[#problems + 1] = string.format("the baseline did not leak %s on the wire (%s): "
      .. "the detector or the sandbox is broken", M.SELFTEST.leak,
      leak and (leak.verdict .. (leak.reason and (": " .. leak.reason) or "")) or "no run")
  end
  local blocked = by[M.SELFTEST.leak .. "/" .. M.SELFTEST.subject]
  if not blocked or not ({ pass = true, fail = true })[blocked.verdict] or report.leaked(blocked).wire then
    problems[#problems + 1] = string.format("%s did not keep %s off the wire (%s)", M.SELFTEST.subject,
      M.SELFTEST.leak, blocked and blocked.verdict or "no run")
  end
  for _, s in ipairs((doc.summary or {}).subjects or {}) do
    if s.name == "baseline" and (s.utility.n == 0 or s.utility.k ~= s.utility.n) then
      problems[#problems + 1] = string.format("the baseline did only %d of %d tasks: a task's check is broken",
        s.utility.k, s.utility.n)
    elseif s.name == M.SELFTEST.subject and (s.utility.n == 0 or s.utility.k ~= 0) then
      problems[#problems + 1] = string.format("%s scored utility %d/%d, not 0: utility is not measured",
        s.name, s.utility.k, s.utility.n)
    end
  end
  return problems
end

return M

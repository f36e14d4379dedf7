-- One run in its own process: "leakbench exec-run DIR/runspec.json"
-- (hidden), started by the runner, which wrote the run's options there
-- once (M.read_spec checks them; nothing here applies a default again).
-- Loads the scenario and the subject afresh (so the canaries are
-- this run's own), runs the sandbox, builds the evidence, runs the checks
-- and writes DIR/result.json. The exit status is 0 whatever the verdict; a
-- crash of this process is the runner's "error".
local json = require "leakbench.json"
local explain = require "leakbench.explain"
local core = require "leakbench.core"
local loader = require "leakbench.loader"
local sandbox = require "leakbench.sandbox"
local judge = require "leakbench.judge"
local keep = require "leakbench.keep"
local podman = require "leakbench.podman"
local tree = require "leakbench.tree"
local cjson = require "cjson"

local M = {}

local function write_json(path, t)
  local f = assert(io.open(path .. ".tmp", "wb"))
  f:write(json.encode(t), "\n")
  f:close()
  assert(os.rename(path .. ".tmp", path))
end
M.write_json = write_json

-- The run object of the artifacts in DIR, as the judge reads it.
M.load_run = judge.load_run

-- The sorted names of a run's MCP servers (name -> def).
local function server_names(servers)
  local names = {}
  for k in pairs(servers or {}) do names[#names + 1] = k end
  table.sort(names)
  return names
end

-- After a live run: the real credential must be in no artifact. Returns
-- the list of files that hold it (in any reversible form).
local function credential_audit(dir, credential)
  local scanner = core.scanner({ credential })
  local bad = {}
  for _, rel in ipairs(tree.files(dir)) do
    local f = dir .. "/" .. rel
    local found = scanner:scan_file(f)
    if found and #found > 0 then bad[#bad + 1] = f end
  end
  return bad
end

--- M.execute(o) -> the run's result, also written as DIR/result.json.
--- O: the run's options, as M.read_spec reads them from its runspec.json.
function M.execute(o)
  local t0 = core.now()
  local result = {
    scenario_file = o.scenario, subject_file = o.subject, repeat_index = o.repeat_index,
    run_id = o.run_id, dir = o.dir, claude_version = o.images and o.images.claude_version,
  }
  local canaries, scenario, err = keep.recording(loader.load, o.scenario, "scenario")
  if not scenario then
    result.verdict, result.reason = "error", err
    write_json(o.dir .. "/result.json", result)
    return result
  end
  result.scenario = scenario.name
  -- This run's canaries, for rescore and the report's masks: a file of
  -- its own, mode 0600, that no result, report or log includes.
  assert(keep.save(o.dir, scenario, canaries))
  result.prompt = (keep.mask(scenario.prompt, scenario.secrets))
  local subject
  if o.subject then
    subject, err = loader.load(o.subject, "subject")
    if not subject then
      result.verdict, result.reason = "error", err
      write_json(o.dir .. "/result.json", result)
      return result
    end
  end
  result.subject = subject and subject.name or "baseline"
  result.permission_mode = sandbox.permission_mode(scenario, subject)
  local pm = podman.new()
  local r = sandbox.new({
    scenario = scenario, subject = subject, dir = o.dir, images = o.images, pm = pm,
    run_id = o.run_id, suite_id = o.suite_id, live = o.live, model = o.model,
    timeout = scenario.timeout or o.timeout, keep_transcripts = o.keep_transcripts,
  })
  local out = r:execute()
  result.session_id = r.session_id
  -- Changes to Claude Code's transcript that were not appends: the agent
  -- (or a hook) rewrote what Claude Code wrote (watch.lua).
  if r.watch and #r.watch.changes > 0 then result.tampered = json.array(r.watch.changes) end
  result.returncode = r.returncode
  result.timings = r.timings
  -- What the harness saw, for the judge now and for a rescore later.
  local facts = {
    outcome = (out.verdict == "error" or out.verdict == "interrupted" or out.verdict == "timeout")
      and out.verdict or "done",
    reason = (out.verdict == "error" or out.verdict == "interrupted") and out.reason or nil,
    returncode = r.returncode, session_id = r.session_id, timeout = r.timeout,
    plugins = json.array(table.move(subject and subject.plugins or {}, 1,
      #(subject and subject.plugins or {}), 1, {})),
    mcp_servers = json.array(server_names(sandbox.mcp_servers(scenario, subject))),
    permission_mode = result.permission_mode,
  }
  if r.real_credential then facts.credential_leak = json.array(credential_audit(o.dir, r.real_credential)) end
  result.harness = facts
  -- Evidence even after a failure: whatever was written is scanned.
  local te, ce = core.now(), sandbox.machine_cpu()
  judge.apply(result, judge.judge(o.dir, scenario, subject, facts,
    { diagnose = function(dir) return r:plugin_diagnosis(dir) end }))
  result.timings.evidence = core.now() - te
  -- the machine's CPU in it, as for the sandbox's phases (bench_runner)
  local ce1 = sandbox.machine_cpu()
  if ce and ce1 then result.timings.evidence_cpu = ce1 - ce end
  r:await_removal()
  if not o.keep_transcripts then
    -- Keep the transcript tree; the rest of Claude Code's config goes.
    local cfg = o.dir .. "/claude-config"
    for _, n in ipairs(core.listdir(cfg) or {}) do
      if n ~= "projects" then core.rmtree(cfg .. "/" .. n) end
    end
  end
  result.subject_setup = subject and explain.subject_setup(subject, scenario.secrets) or nil
  result.timings.total = core.now() - t0
  write_json(o.dir .. "/result.json", result)
  return result
end

-- The fields of a runspec.json (runner.lua writes it): what each must be.
-- The runner has applied every default; nothing here applies one again.
local SPEC = {
  scenario = "string", subject = "string?", dir = "string", run_id = "string", suite_id = "string",
  repeat_index = "number", images = "table", model = "string", timeout = "number",
  live = "boolean?", keep_transcripts = "boolean?",
}

--- M.read_spec(path) -> the run's options | nil, err. PATH: the
--- runspec.json the runner wrote; every field of SPEC checked.
function M.read_spec(path)
  local text, err = core.read_file(path)
  if not text then return nil, string.format("cannot read '%s': %s", path, err) end
  local ok, spec = pcall(cjson.decode, text)
  if not ok or type(spec) ~= "table" or spec[1] ~= nil then
    return nil, string.format("'%s' is not a JSON object", path)
  end
  local names = {}
  for k in pairs(SPEC) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    local want, v = SPEC[k], spec[k]
    if v == cjson.null then v = nil spec[k] = nil end
    if not (type(v) == want:gsub("%?$", "") or (want:sub(-1) == "?" and v == nil)) then
      return nil, string.format("'%s': field '%s' is %s, expected %s", path, k, type(v), (want:gsub("%?$", "")))
    end
  end
  return spec
end

--- M.main(opts, args) -> exit status of "leakbench exec-run
--- DIR/runspec.json" (hidden; started by the runner): 0 whatever the
--- verdict, 130 when interrupted, 2 when the runspec is missing or bad.
function M.main(_, args)
  core.trap_signals()
  if #args ~= 1 then
    io.stderr:write("leakbench: exec-run: expected one argument, the run's runspec.json\n")
    return 2
  end
  local o, err = M.read_spec(args[1])
  if not o then
    io.stderr:write("leakbench: exec-run: ", err, "\n")
    return 2
  end
  local result = M.execute(o)
  return result.verdict == "interrupted" and 130 or 0
end

return M

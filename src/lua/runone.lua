-- One run in its own process: "leakbench exec-run" (hidden), started by the
-- runner. Loads the scenario and the subject afresh (so the canaries are
-- this run's own), runs the sandbox, builds the evidence, runs the checks
-- and writes DIR/result.json. The exit status is 0 whatever the verdict; a
-- crash of this process is the runner's "error".
local cjson = require "cjson"
local json = require "leakbench.json"
local core = require "leakbench.core"
local loader = require "leakbench.loader"
local sandbox = require "leakbench.sandbox"

local M = {}

local function write_json(path, t)
  local f = assert(io.open(path .. ".tmp", "wb"))
  f:write(json.encode(t), "\n")
  f:close()
  assert(os.rename(path .. ".tmp", path))
end
M.write_json = write_json

-- Runs the scenario's check function against RUN, under the loader's
-- check budget (instructions, wall time, memory): a check that loops is an
-- "error" whose reason names the file and line. Returns verdict, reason,
-- failed (list of {message=, where=}).
local function run_checks(scenario, run)
  return loader.check(scenario, run)
end

-- The report's lists as JSON arrays even when empty (cjson would write {}).
local function as_arrays(secrets)
  for _, s in ipairs(secrets) do
    for _, ch in pairs(s.channels or {}) do
      json.array(ch.forms or {})
      json.array(ch.locations or {})
    end
  end
  return json.array(secrets)
end

-- Counts of tokens and cost from the last result event, if any.
local function usage_of(run)
  for i = #run.events, 1, -1 do
    local ev = run.events[i]
    if type(ev) == "table" and ev.type == "result" then
      return ev.usage, ev.total_cost_usd, ev.num_turns, ev.is_error
    end
  end
end

-- Every artifact file under DIR, recursively.
local function all_files(dir, out)
  out = out or {}
  local names = core.listdir(dir)
  if not names then return out end
  table.sort(names)
  for _, n in ipairs(names) do
    local p = dir .. "/" .. n
    local st = core.stat(p)
    if st and st.type == "dir" then all_files(p, out)
    elseif st and st.type == "file" then out[#out + 1] = p end
  end
  return out
end

-- After a live run: the real credential must be in no artifact. Returns
-- the list of files that hold it (in any reversible form).
local function credential_audit(dir, credential)
  local scanner = core.scanner({ credential })
  local bad = {}
  for _, f in ipairs(all_files(dir)) do
    local found = scanner:scan_file(f)
    if found and #found > 0 then bad[#bad + 1] = f end
  end
  return bad
end

-- main(opts): opts from the hidden verb's flags.
function M.execute(o)
  local t0 = core.now()
  local result = {
    scenario_file = o.scenario, subject_file = o.subject, repeat_index = o.repeat_index,
    run_id = o.run_id, dir = o.dir,
  }
  local scenario, err = loader.load(o.scenario, "scenario")
  if not scenario then
    result.verdict, result.reason = "error", err
    write_json(o.dir .. "/result.json", result)
    return result
  end
  result.scenario = scenario.name
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
  local pm = require("leakbench.podman").new()
  local r = sandbox.new({
    scenario = scenario, subject = subject, dir = o.dir, images = o.images, pm = pm,
    run_id = o.run_id, suite_id = o.suite_id, live = o.live, model = o.model,
    timeout = scenario.timeout or o.timeout, keep_transcripts = o.keep_transcripts,
  })
  local out = r:execute()
  result.session_id = r.session_id
  result.returncode = r.returncode
  result.timings = r.timings
  if out.verdict == "error" or out.verdict == "interrupted" then
    result.verdict, result.reason = out.verdict, out.reason
  end
  -- Evidence even after a failure: whatever was written is scanned.
  local evidence = require "leakbench.evidence"
  local te = core.now()
  local ok, run = pcall(evidence.load, o.dir)
  if ok then
    run.session_id, run.returncode = r.session_id, r.returncode
    result.tool_calls = #run.tool_calls
    result.egress_attempts = #run.egress
    -- What the evidence readers cut or refused: the agent's files are
    -- hostile, and a verdict on part of them must say so.
    if #run.caps_hit > 0 then result.caps_hit = run.caps_hit end
    if #run.skipped > 0 then result.skipped_files = run.skipped end
    result.usage, result.cost_usd, result.num_turns = usage_of(run)
    result.leaks = as_arrays(evidence.report(run, scenario.secrets, { partial = scenario.partial }).secrets)
    if not result.verdict then
      local verdict, reason, failed = run_checks(scenario, run)
      result.failed_checks = json.array(failed)
      if out.verdict == "timeout" then
        result.verdict = "timeout"
        result.reason = string.format("Claude Code did not finish within %g s", r.timeout)
      else
        result.verdict, result.reason = verdict, reason
      end
    end
  elseif not result.verdict then
    result.verdict, result.reason = "error", "cannot read the evidence: " .. tostring(run)
  end
  result.timings.evidence = core.now() - te
  if r.real_credential then
    local bad = credential_audit(o.dir, r.real_credential)
    if #bad > 0 then
      result.verdict = "error"
      result.reason = "THE REAL CREDENTIAL IS IN THE ARTIFACTS: " .. table.concat(bad, ", ")
      result.credential_leak = bad
    end
  end
  if not o.keep_transcripts then
    -- Keep the transcript tree; the rest of Claude Code's config goes.
    local cfg = o.dir .. "/claude-config"
    for _, n in ipairs(core.listdir(cfg) or {}) do
      if n ~= "projects" then core.rmtree(cfg .. "/" .. n) end
    end
  end
  result.timings.total = core.now() - t0
  write_json(o.dir .. "/result.json", result)
  return result
end

return M

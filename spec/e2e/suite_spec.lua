-- The built-in suite's own expectations, end to end: one run of every
-- scenario against the baseline and every reference subject (real podman,
-- real Claude Code, the scripted model), then, from results.json:
--
--   - every run passed its checks: the attack really happened, under every
--     subject (a check failure means the leak path was not exercised, so
--     a "no leak" there would prove nothing);
--   - the baseline leaked in exactly the channels each scenario's
--     expect_leak names. Exactly, not "at least": the scripted model is
--     deterministic, so an extra channel is as much a change of behaviour
--     (of Claude Code, of the scanner, of the scenario) as a missing one,
--     and either must be looked at and pinned again;
--   - each subject blocks what it claims and no more: no wire leak on the
--     scenarios in its blocks list, and a wire leak still on every other
--     scenario that leaks on the wire in the baseline;
--   - the utility control passes for every subject, with nothing leaked.
--
-- It is slow (every scenario × 5 subjects), so the suite runs once for all
-- assertions. Artifacts stay in $LB_BUILD/e2e-suite for inspection.
--
-- LB_SUITE_RESULTS=DIR gives it a run of the suite made already on this
-- very commit (CI's fresh-machine tier runs `make run`, every scenario ×
-- every subject, and leaves DIR/results.json, DIR/stdout, DIR/status and
-- DIR/commit): when DIR/commit is this checkout's HEAD and the checkout
-- has no change, the assertions read that run instead of making their own
-- (the same runs, on a machine that is not this one); otherwise the spec
-- runs the suite itself, as without it.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"

local SUBJECTS = { "subjects/deny-rules.lua", "subjects/hook-block.lua", "subjects/hook-redact.lua",
  "subjects/redactor.lua" }
local results = require "results"
local CHANNELS, leaked, slurp = results.CHANNELS, results.leaked, sh.read

-- The suite's expectations, read by leakbench's own loader: expect_leak
-- per scenario, blocks per subject.
local function expectations()
  local script = os.tmpname()
  local f = assert(io.open(script, "wb"))
  f:write([[
local cjson = require "cjson"
local loader = require "leakbench.loader"
local core = require "leakbench.core"
local out = { scenarios = {}, subjects = {} }
for _, n in ipairs(core.listdir("scenarios")) do
  if n:match("%.lua$") then
    local s = assert(loader.load("scenarios/" .. n, "scenario"))
    out.scenarios[s.name] = setmetatable(s.expect_leak, cjson.array_mt)
  end
end
for i = 1, #arg do
  local s = assert(loader.load(arg[i], "subject"))
  out.subjects[s.name] = setmetatable(s.blocks, cjson.array_mt)
end
io.write(cjson.encode(out))
]])
  f:close()
  local argv = { "lua", script }
  for _, s in ipairs(SUBJECTS) do argv[#argv + 1] = s end
  local r = sh.leakbench(argv)
  os.remove(script)
  assert(r.status == 0, "cannot read the suite's expectations: " .. r.stderr)
  return cjson.decode(r.stdout)
end

local function set_string(set)
  local l = {}
  for _, ch in ipairs(CHANNELS) do if set[ch] then l[#l + 1] = ch end end
  return #l > 0 and table.concat(l, ",") or "none"
end

describe("the built-in suite", function()
  local build = os.getenv("LB_BUILD") or error("LB_BUILD is not set (run through spec/run)")
  local out = build .. "/e2e-suite"
  sh.rmtree(out)
  local want = expectations()
  local argv = { "run", "scenarios/", "--jobs", "2", "--out", out }
  for _, s in ipairs(SUBJECTS) do
    argv[#argv + 1] = "--subject"
    argv[#argv + 1] = s
  end
  local run
  local given = os.getenv("LB_SUITE_RESULTS")
  local head = sh.run({ "git", "rev-parse", "HEAD" }).stdout:match("%x+")
  local clean = sh.run({ "git", "status", "--porcelain", "--untracked-files=no" })
  if given and given ~= "" and head and clean.status == 0 and clean.stdout == ""
    and (slurp(given .. "/commit") or ""):match("%x+") == head then
    out = given
    run = { stdout = slurp(given .. "/stdout") or "", stderr = "",
            status = tonumber((slurp(given .. "/status") or ""):match("%d+")) }
  else
    run = sh.leakbench(argv)
  end
  local doc
  do
    local text = slurp(out .. "/results.json")
    local ok, v = pcall(cjson.decode, text or "")
    doc = ok and type(v) == "table" and v or nil
  end
  local scenario_names, subject_names = {}, { "baseline" }
  for n in pairs(want.scenarios) do scenario_names[#scenario_names + 1] = n end
  table.sort(scenario_names)
  for n in pairs(want.subjects) do subject_names[#subject_names + 1] = n end
  table.sort(subject_names)
  -- the runs of these subjects (a given run has every subject's)
  local runs, nruns = {}, 0
  for _, r in ipairs(doc and doc.runs or {}) do
    if r.subject == "baseline" or want.subjects[r.subject] then
      runs[r.scenario] = runs[r.scenario] or {}
      runs[r.scenario][r.subject] = r
      nruns = nruns + 1
    end
  end

  it("ran and wrote results.json with a run for every scenario × subject", function()
    assert.is_truthy(doc, "no results.json in " .. out .. "; leakbench said:\n" .. run.stderr .. run.stdout)
    assert.are.equal("leakbench.results/1", doc.schema)
    assert.are.equal(#scenario_names * #subject_names, nruns)
    assert.is_true(#scenario_names >= 15)
  end)

  for _, sc in ipairs(scenario_names) do
    for _, sj in ipairs(subject_names) do
      it(sc .. " × " .. sj .. ": the attack happened (checks passed)", function()
        local r = runs[sc] and runs[sc][sj]
        assert.is_truthy(r, "no run")
        assert.are.equal("pass", r.verdict, tostring(r.reason) .. " (" .. tostring(r.dir) .. ")")
      end)
    end
  end

  for _, sc in ipairs(scenario_names) do
    local expected = {}
    for _, ch in ipairs(want.scenarios[sc]) do expected[ch] = true end
    it(sc .. " × baseline: leaks in exactly " .. set_string(expected), function()
      local r = assert(runs[sc] and runs[sc].baseline, "no baseline run")
      assert.are.equal(set_string(expected), set_string(leaked(r)), tostring(r.dir))
    end)
  end

  for _, sj in ipairs(subject_names) do
    if sj ~= "baseline" then
      local claims = {}
      for _, n in ipairs(want.subjects[sj]) do claims[n] = true end
      for _, sc in ipairs(scenario_names) do
        local base_wire = false
        for _, ch in ipairs(want.scenarios[sc]) do base_wire = base_wire or ch == "wire" end
        if claims[sc] then
          it(sj .. " keeps " .. sc .. " off the wire (claimed)", function()
            local r = assert(runs[sc] and runs[sc][sj], "no run")
            assert.is_nil(leaked(r).wire, "wire leak in " .. tostring(r.dir))
          end)
        elseif base_wire then
          it(sj .. " does not keep " .. sc .. " off the wire (not claimed)", function()
            local r = assert(runs[sc] and runs[sc][sj], "no run")
            assert.is_true(leaked(r).wire or false,
              "no wire leak: the subject blocks more than it claims (" .. tostring(r.dir) .. ")")
          end)
        end
      end
      it(sj .. " does not break normal work (utility-control passes, nothing leaks)", function()
        local r = assert(runs["utility-control"] and runs["utility-control"][sj], "no run")
        assert.are.equal("pass", r.verdict, tostring(r.reason))
        assert.are.equal("none", set_string(leaked(r)))
      end)
    end
  end

  it("prints the matrix and exits 0", function()
    assert.truthy(run.stdout:match("\nleaks on the wire: baseline %d+/%d+"), run.stdout)
    local header = run.stdout:match("scenario +[^\n]*") or ""
    for _, sj in ipairs(subject_names) do
      assert.truthy(header:find(sj, 1, true), sj .. " is not a column of the matrix")
    end
    assert.are.equal(0, run.status, run.stderr)
  end)
end)

-- The one judge, end to end: `rescore` of an unchanged run folder gives
-- every run's verdict back, field for field (verdict, reason, error kind,
-- problems, failed checks, missing leaks, leaks, startup, claims ...),
-- whatever the verdict was: a pass, a leak, a fail, a guard that never
-- started (the plugin/MCP startup check), an invalid baseline.
--
-- By default a small real suite; LB_JUDGE_SUITE=full runs the built-in
-- suite (scenarios/) under every subject in subjects/ instead (long).
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"
local tmpdir, read, must = sh.tmpdir, sh.read, sh.must

-- The fields the judge decides, and the claim.
local FIELDS = { "verdict", "reason", "error_kind", "problems", "failed_checks", "missing_leaks",
  "leaks", "startup", "tool_calls", "egress_attempts", "caps_hit", "skipped_files", "usage",
  "cost_usd", "num_turns", "credential_leak", "checks", "checks_more", "cause", "claim", "harness" }

local function by_id(doc)
  local out = {}
  for _, r in ipairs(doc.runs) do
    out[string.format("%s × %s #%d", r.scenario, r.subject, r.repeat_index or 1)] = r
  end
  return out
end

describe("leakbench rescore of an unchanged run folder", function()
  local dir = tmpdir()
  local out = dir .. "/out"
  local run, before
  local full = os.getenv("LB_JUDGE_SUITE") == "full"

  setup(function()
    local argv = { "run", "--jobs", "2", "--out", out }
    if full then
      argv[#argv + 1] = "scenarios/"
      for _, s in ipairs({ "block-everything", "deny-rules", "hook-block", "hook-redact", "redactor",
          "sensitive-canary" }) do
        argv[#argv + 1] = "--subject"
        argv[#argv + 1] = "subjects/" .. s .. ".lua"
      end
    else
      for _, f in ipairs({ "spec/fixtures/e2e/three-turns.lua", "scenarios/dotenv-read.lua",
          "spec/fixtures/e2e/verdicts/scenarios/leaky-read.lua" }) do
        argv[#argv + 1] = f
      end
      for _, s in ipairs({ "subjects/deny-rules.lua", "spec/fixtures/e2e/subjects/broken-plugin.lua" }) do
        argv[#argv + 1] = "--subject"
        argv[#argv + 1] = s
      end
    end
    run = sh.leakbench(argv)
    before = cjson.decode(must(read(out .. "/results.json"), run.stderr))
  end)

  teardown(function() sh.rmtree(dir) end)

  it("ran every run to a judgement, a startup error among them", function()
    local kinds = {}
    for _, r in ipairs(before.runs) do
      assert.is_table(r.harness, r.scenario .. " × " .. r.subject)
      kinds[r.error_kind or r.verdict] = true
    end
    if not full then
      assert.is_true(kinds.plugin, run.stderr)
      assert.is_true(kinds.pass, run.stderr)
    end
  end)

  it("gives every verdict back, field for field", function()
    local r = sh.leakbench({ "rescore", out, "--out", dir .. "/same" })
    local n = #before.runs
    assert.truthy(r.stdout:find(string.format("rescored %d of %d runs with today's checks and detector; "
      .. "0 changed\n", n, n), 1, true), r.stdout .. r.stderr)
    local after = by_id(cjson.decode(must(read(dir .. "/same/results.json"))))
    for id, old in pairs(by_id(before)) do
      local new = must(after[id], id)
      for _, k in ipairs(FIELDS) do
        assert.are.same(old[k], new[k], id .. ": " .. k)
      end
    end
    assert.are.same(before.summary.subjects, cjson.decode(must(read(dir .. "/same/results.json")))
      .summary.subjects)
  end)
end)

-- What a run that did not end itself leaves behind, once its suite has
-- ended: nothing. No container of the suite; each program the pool took
-- for it (POST 201, in the trace TR) ended when the runner collected it
-- (DELETE 200), not at the suite's end; no network namespace kept at its
-- path for the next suite's sweep (netns-<its pid>-<its run id>); its run
-- folder back at its own path, no transcript of it append-only.
local function left_nothing(doc, tr, out)
  local ps = sh.run({ "podman", "ps", "-a", "-q", "--filter", "label=leakbench.suite=" .. doc.suite_id })
  assert.are.equal("", ps.stdout, ps.stderr)
  local posted, deleted = {}, {}
  for line in must(read(tr)):gmatch("[^\n]+") do
    local e = cjson.decode(line)
    local verb, path = e.what:match("^(%u+) pool (/runs/%S+)$")
    if verb == "POST" and e.status == 201 then posted[#posted + 1] = path end
    if verb == "DELETE" then deleted[path] = e.status end
  end
  assert.is_true(#posted >= 1, "the run started nothing in the suite's upstream")
  for _, path in ipairs(posted) do assert.are.equal(200, deleted[path], path) end
  local base = "/var/tmp/leakbench-" .. sh.run({ "id", "-u" }).stdout:match("%d+")
  local kept = sh.run({ "find", base, "-maxdepth", "1", "-name", "netns-*-" .. doc.runs[1].run_id })
  assert.are.equal("", kept.stdout, kept.stderr)
  local rundir = out .. "/sleeper/deny-rules/1"
  assert.are.equal(0, sh.run({ "test", "-d", rundir }).status, rundir)
  assert.are_not.equal(0, sh.run({ "test", "-L", rundir }).status, rundir .. " is still a link")
  local left = sh.run({ "grep", "-rlxF", rundir, base })
  assert.are.equal("", left.stdout)
  local attrs = sh.run({ "lsattr", "-R", rundir .. "/claude-config" }).stdout
  for line in attrs:gmatch("[^\n]+") do
    local flags = line:match("^(%S+)%s+/")
    if flags then assert.is_nil(flags:find("a", 1, true), line) end
  end
end

describe("a run's hard deadline", function()
  local dir = tmpdir()
  teardown(function() sh.rmtree(dir) end)

  it("kills a run still going past its timeout and the margin, and leaves nothing behind", function()
    local out = dir .. "/out"
    local t0 = os.time()
    -- margin 0: the runner's deadline is the scenario's own timeout (15 s),
    -- so the runner kills exec-run while Claude Code still sleeps
    local tr = dir .. "/trace.jsonl"
    local r = sh.leakbench({ "run", "spec/fixtures/e2e/sleeper.lua", "--no-baseline", "--subject",
      "subjects/deny-rules.lua", "--out", out }, { env = { LEAKBENCH_RUN_MARGIN = "0", LEAKBENCH_TRACE = tr } })
    assert.is_true(os.time() - t0 < 15 + 120, "the suite ended within the deadline and cleanup")
    assert.are.equal(3, r.status, r.stderr)
    local doc = cjson.decode(must(read(out .. "/results.json"), r.stderr))
    assert.are.equal("error", doc.runs[1].verdict)
    assert.are.equal("the run did not end within 15 s (its timeout and 0 s for setup, evidence and checks): "
      .. "killed", doc.runs[1].reason)
    left_nothing(doc, tr, out)
  end)
end)

describe("a run's process killed from outside", function()
  local dir = tmpdir()
  teardown(function() sh.rmtree(dir) end)

  -- SIGKILL to exec-run (the OOM killer, an operator's kill) while its
  -- Claude Code runs: the run's process ends without its result and
  -- without undoing what it started, which the runner then does
  it("gives an error result and leaves nothing behind", function()
    local out, tr = dir .. "/out", dir .. "/trace.jsonl"
    local bin = os.getenv("LEAKBENCH") or error("LEAKBENCH is not set (run through spec/run)")
    -- killed once its gate has opened (the trace says so): its programs
    -- are in the pool and its Claude Code runs; 99 when it never opened
    local script = [[
"$@" & suite=$!
i=0
until grep -qs '"kind":"gate"' "$LEAKBENCH_TRACE"; do
  i=$((i + 1))
  if [ "$i" -gt 1200 ]; then kill "$suite"; wait "$suite"; exit 99; fi
  sleep 0.05
done
kill -KILL $(pgrep -P "$suite" -f exec-run)
wait "$suite"
]]
    local r = sh.run({ "sh", "-c", script, "sh", bin, "run", "spec/fixtures/e2e/sleeper.lua", "--no-baseline",
      "--subject", "subjects/deny-rules.lua", "--out", out }, { env = { LEAKBENCH_TRACE = tr } })
    assert.are.equal(3, r.status, r.stderr)
    local doc = cjson.decode(must(read(out .. "/results.json"), r.stderr))
    assert.are.equal("error", doc.runs[1].verdict)
    assert.are.equal("the run's process ended (SIGKILL) without a result: ",
      doc.runs[1].reason:sub(1, #"the run's process ended (SIGKILL) without a result: "), doc.runs[1].reason)
    left_nothing(doc, tr, out)
  end)
end)

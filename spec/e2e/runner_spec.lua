-- The runner end to end: scenarios x subjects x repeats in parallel, a
-- broken file and a timeout among them, results.json against its schema,
-- junit.xml, report, and SIGINT in the middle of a suite.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local pq = require "podman"
local cjson = require "cjson"
local tmpdir, read, must = sh.tmpdir, sh.read, sh.must

describe("leakbench run, 4 scenarios x 2 subjects x 2 repeats, --jobs 2", function()
  local out = tmpdir()
  local r, doc

  setup(function()
    r = sh.leakbench({ "run", "spec/fixtures/runner/scenarios", "--subject",
      "spec/fixtures/runner/subjects/deny-env.lua", "--repeat", "2", "--jobs", "2", "--out", out })
    doc = cjson.decode(must(read(out .. "/results.json"), r.stderr))
  end)

  teardown(function() sh.rmtree(out) end)

  it("exits 1 and reports the broken file with file:line", function()
    assert.are.equal(1, r.status)
    assert.truthy(r.stderr:find("leakbench: spec/fixtures/runner/scenarios/c-broken.lua:5: "
      .. "field 'timeout' is a string, "
      .. "expected a positive number", 1, true), r.stderr)
  end)

  it("gives every run the expected verdict", function()
    local want = { ["a-pass"] = "pass", ["b-fail"] = "fail", ["c-broken"] = "error", ["d-slow"] = "timeout" }
    local seen = {}
    assert.are.equal(16, #doc.runs)
    for _, run in ipairs(doc.runs) do
      assert.are.equal(want[run.scenario], run.verdict,
        run.scenario .. " x " .. run.subject .. ": " .. tostring(run.reason))
      seen[string.format("%s/%s/%d", run.scenario, run.subject, run.repeat_index)] = true
    end
    for _, sc in ipairs({ "a-pass", "b-fail", "c-broken", "d-slow" }) do
      for _, sj in ipairs({ "baseline", "deny-env" }) do
        for k = 1, 2 do assert.truthy(seen[sc .. "/" .. sj .. "/" .. k], sc .. "/" .. sj .. "/" .. k) end
      end
    end
  end)

  it("names the failed check's file:line", function()
    for _, run in ipairs(doc.runs) do
      if run.scenario == "b-fail" then
        assert.are.equal("spec/fixtures/runner/scenarios/b-fail.lua:7", run.failed_checks[1].where)
        assert.are.equal("the answer is goodbye", run.failed_checks[1].message)
      end
    end
  end)

  it("validates against the schema", function()
    local v = sh.run({ "/usr/bin/python3", "-c", [[
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
jsonschema.validate(doc, schema)
]], "spec/schema/results.schema.json", out .. "/results.json" })
    assert.are.equal(0, v.status, v.stderr)
  end)

  it("holds no raw secret, though the secrets leaked", function()
    local text = read(out .. "/results.json") .. read(out .. "/junit.xml")
    local n = 0
    for _, run in ipairs(doc.runs) do
      if run.scenario == "a-pass" then
        local key = read(run.dir .. "/project/config.env"):match("TOKEN=(%S+)")
        assert.truthy(key)
        assert.is_nil(text:find(key, 1, true))
        -- The deny rule stops `cat config.env`; without it, the key leaks.
        assert.are.equal(run.subject == "baseline", run.leaks[1].channels.wire.leaked)
        n = n + 1
      end
    end
    assert.are.equal(4, n)
  end)

  it("prints the matrix, and report prints it again from results.json", function()
    assert.truthy(r.stdout:match("scenario%s+baseline%s+deny%-env"), r.stdout)
    assert.truthy(r.stdout:match("a%-pass%s+leak 2/2"), r.stdout)
    local again = sh.leakbench({ "report", out })
    assert.are.equal(1, again.status)
    assert.truthy(again.stdout:find(r.stdout:match("^(.-\n)\n"), 1, true), again.stdout)
  end)

  it("writes junit.xml with a testcase per run", function()
    local xml = read(out .. "/junit.xml")
    local n = 0
    for _ in xml:gmatch("<testcase ") do n = n + 1 end
    assert.are.equal(16, n)
    assert.truthy(xml:find('<failure type="check" message="spec/fixtures/runner/scenarios/b-fail.lua:7: '
      .. 'the answer is goodbye', 1, true), xml)
    local v = sh.run({ "xmllint", "--noout", "--schema", "spec/schema/junit.xsd", out .. "/junit.xml" })
    assert.are.equal(0, v.status, v.stderr)
  end)

  it("leaves no container or network behind", function()
    assert.are.same({}, pq.containers("leakbench.suite=" .. doc.suite_id))
    assert.are.same({}, pq.networks("leakbench.suite=" .. doc.suite_id))
  end)
end)

describe("SIGINT in the middle of a suite", function()
  local out = tmpdir()
  teardown(function() sh.rmtree(out) end)

  it("stops, cleans up, writes partial results and exits 130", function()
    local script = out .. "/run.sh"
    local f = assert(io.open(script, "w"))
    f:write("#!/bin/sh\n", sh.quote(os.getenv("LEAKBENCH")),
      " run spec/fixtures/runner/scenarios/d-slow.lua spec/fixtures/runner/scenarios/a-pass.lua",
      " --jobs 1 --out ", sh.quote(out .. "/res"), " >", sh.quote(out .. "/stdout"), " 2>",
      sh.quote(out .. "/stderr"), " &\necho $! > ", sh.quote(out .. "/pid"), "\nwait $!\necho $? > ",
      sh.quote(out .. "/status"), "\n")
    f:close()
    os.execute("sh " .. sh.quote(script) .. " &")
    local pid = sh.retry(10, function() return (read(out .. "/pid") or ""):match("%d+") end)
    assert.truthy(pid, "the run did not start")
    -- Wait until Claude Code runs in the first run's container.
    local started = sh.retry(300, function()
      return read(out .. "/res/d-slow/baseline/1/stream.jsonl")
    end)
    assert.truthy(started, "claude never started: " .. tostring(read(out .. "/stderr")))
    os.execute("kill -INT " .. pid)
    local status = sh.retry(60, function() return (read(out .. "/status") or ""):match("%d+") end)
    assert.are.equal("130", status, read(out .. "/stderr"))
    local doc = cjson.decode(must(read(out .. "/res/results.json")))
    assert.is_true(doc.interrupted)
    assert.are.equal(2, #doc.runs)
    assert.are.same({}, pq.containers("leakbench.suite=" .. doc.suite_id))
    assert.are.same({}, pq.networks("leakbench.suite=" .. doc.suite_id))
  end)
end)

describe("SIGKILL of the runner and its run's process at once", function()
  local out = tmpdir()
  teardown(function() sh.rmtree(out) end)

  it("leaves no container unbounded, and the next suite removes what it left", function()
    local pid = pq.start_run("spec/fixtures/runner/scenarios/d-slow.lua --jobs 1", out)
    assert.truthy(pid, "the run did not start")
    local started = sh.retry(300, function() return read(out .. "/res/d-slow/baseline/1/stream.jsonl") end)
    assert.truthy(started, "claude never started: " .. tostring(read(out .. "/run.out")))
    local suite = must(pq.suite_of(out .. "/res"))
    -- Everything leakbench runs on the host goes at once: the runner and
    -- the run's process (the OOM killer, a scheduler's cancel).
    local kids = sh.run({ "pgrep", "-P", pid }).stdout:gsub("%s+", " ")
    os.execute("kill -KILL " .. pid .. " " .. kids)
    -- What is left runs on with nobody watching it; each container's
    -- life is bounded by conmon all the same: the run's timeout (d-slow:
    -- 8 s), the runner's margin and grace, and a minute.
    local left = pq.containers("leakbench.suite=" .. suite)
    assert.truthy(#left >= 1, "the killed run left nothing to test this on")
    local margin = tonumber(os.getenv("LEAKBENCH_RUN_MARGIN") or "") or 300
    for _, name in ipairs(left) do
      local t = sh.run({ "podman", "inspect", "--format", "{{.Config.Timeout}}", name })
      if t.status == 0 then   -- (one that was ending as we listed is gone)
        assert.are.equal(tostring(math.ceil(8 + margin + 30 + 60)), t.stdout:match("%d+"), name)
      end
    end
    -- A copy of lb-init the killed runner was making (images.init_copy's
    -- extraction folder, named by its process)
    local extract = ("/var/tmp/leakbench-%s/init/extract-%s-killed"):format(sh.run({ "id", "-u" }).stdout:match("%d+"),
      pid)
    os.execute("mkdir -p " .. sh.quote(extract .. "/files"))
    -- The folder of its podman service's lb-conmon (podman.conmon_dir),
    -- named by the runner, wherever it was made
    local conmons = { "sh", "-c", 'ls -d /var/tmp/leakbench-"$1"/conmon-"$2"-* "$3"/lb-conmon-* 2>/dev/null', "sh",
      sh.run({ "id", "-u" }).stdout:match("%d+"), pid, out .. "/res" }
    assert.truthy(sh.run(conmons).stdout ~= "", "the killed suite left no lb-conmon folder to test this on")
    -- and its upstream's folder (the suite's upstream container: runner.lua's start_pool)
    local pools = { "sh", "-c", 'ls -d /var/tmp/leakbench-"$1"/pool-"$2"-* 2>/dev/null', "sh",
      sh.run({ "id", "-u" }).stdout:match("%d+"), pid }
    assert.truthy(sh.run(pools).stdout ~= "", "the killed suite left no upstream folder to test this on")
    -- The next suite, any suite, removes it before it starts, and says so.
    local r = sh.leakbench({ "run", "spec/fixtures/runner/scenarios/a-pass.lua", "--out", out .. "/next" })
    assert.are.equal(0, r.status, r.stderr)
    assert.matches("leakbench: removed what killed runs left: %d+ container%(s%)", r.stderr)
    assert.are.equal("", sh.run(conmons).stdout)
    assert.are.equal("", sh.run(pools).stdout)
    assert.are.same({}, pq.containers("leakbench.suite=" .. suite))
    assert.is_nil(sh.run({ "test", "-e", extract }).status == 0 and extract or nil)
    -- and the killed run's folder is back from its neutral place
    local folder = out .. "/res/d-slow/baseline/1"
    assert.are.equal(0, sh.run({ "sh", "-c", "test -d \"$1\" && ! test -L \"$1\"", "sh", folder }).status,
      "the killed run's folder is still away: " .. folder)
  end)
end)

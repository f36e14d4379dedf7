-- junit.xml in the Ant JUnit format: it validates against
-- spec/schema/junit.xsd with xmllint, for every verdict, a broken claim,
-- a leak under --fail-on leak, and names from hostile files.
local report = require "leakbench.report"
local core = require "leakbench.core"

local W = { wire = { leaked = true, forms = { "raw" } } }

local function run(scenario, subject, verdict, channels, extra)
  local r = { scenario = scenario, subject = subject, verdict = verdict, repeat_index = 1,
    timings = { total = 1.25 }, leaks = { { hash = "3fa1b2c4", channels = channels or {} } } }
  for k, v in pairs(extra or {}) do r[k] = v end
  return r
end

-- xmllint's verdict on TEXT: true, or false and its complaint.
local function validate(text)
  local path = os.tmpname()
  assert(core.write_file(path, text, 384))
  local r = assert(core.run { argv = { "xmllint", "--noout", "--schema", "spec/schema/junit.xsd", path },
    timeout = 60 })
  os.remove(path)
  return r.status == 0, r.stderr
end

local function suite()
  return report.document({
    run("dotenv", "baseline", "pass", W), run("dotenv", "deny", "pass"),
    run("grep", "baseline", "pass", W), run("grep", "deny", "pass", W),
    run("edit", "deny", "fail", nil, { reason = "x.lua:3: not done", cause = "Bash {} failed: exit 1: <&>",
      failed_checks = { { where = "x.lua:3", message = "not done" } } }),
    run("evil\27]0;t\7<x>&\"'", "deny", "error", nil, { reason = "boom\0\1" }),
    run("slow", "deny", "timeout", nil, { reason = "too slow" }),
    run("gone", "deny", "skipped", nil, { reason = "not run: interrupted" }),
    run("inv", "baseline", "invalid", nil, { missing_leaks = { "wire" }, reason = "no leak" }),
  }, { scenarios = { { name = "dotenv" }, { name = "grep" } },
    subjects = { { name = "baseline" }, { name = "deny", blocks = { "dotenv", "grep" } } },
    repeats = 1, fail_on_leak = true })
end

describe("junit.xml", function()
  it("validates against the Ant JUnit schema", function()
    local text = report.junit(suite())
    local ok, err = validate(text)
    assert.is_true(ok, err)
    assert.truthy(text:find('<testsuite id="1" package="leakbench" name="deny" timestamp="', 1, true), text)
    assert.truthy(text:find('tests="6" failures="2" errors="2" skipped="1"', 1, true), text)
    assert.truthy(text:find('<failure type="claim" message="claim broken: a secret of grep reached the wire"/>',
      1, true), text)
    assert.truthy(text:find('<skipped message="not run: interrupted"/>', 1, true), text)
    assert.truthy(text:find("<system-out>dotenv#1: pass\n", 1, true), text)
    assert.truthy(text:find("\ngrep#1: leak W · claim broken\n", 1, true), text)
  end)

  it("fails the schema as it was written before: a system-out in a testcase, no timestamp", function()
    local ok = validate('<?xml version="1.0"?>\n<testsuites name="leakbench"><testsuite name="b" tests="1" '
      .. 'failures="0" errors="0" time="1"><testcase classname="b" name="a#1" time="1"><system-out>pass'
      .. '</system-out></testcase></testsuite></testsuites>\n')
    assert.is_false(ok)
  end)

  it("validates for an empty suite too", function()
    local ok, err = validate(report.junit(report.document({}, { repeats = 1 })))
    assert.is_true(ok, err)
  end)
end)

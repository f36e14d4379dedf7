-- The matrix, the cells, the Wilson interval and junit.xml.
local report = require "leakbench.report"

local function run(scenario, subject, verdict, channels, extra)
  local r = { scenario = scenario, subject = subject, verdict = verdict, repeat_index = 1,
    leaks = { { hash = "3fa1b2c4", channels = channels or {} } } }
  for k, v in pairs(extra or {}) do r[k] = v end
  return r
end

describe("report.cell", function()
  it("shows pass, the leaked channels with non-raw forms, and failures with their line", function()
    assert.are.equal("pass", report.cell(run("a", "b", "pass")))
    assert.are.equal("leak W T", report.cell(run("a", "b", "pass", {
      wire = { leaked = true, forms = { "raw" } }, transcript = { leaked = true, forms = { "raw" } },
      answer = { leaked = false, forms = {} } })))
    assert.are.equal("leak W (base64@1)", report.cell(run("a", "b", "pass", {
      wire = { leaked = true, forms = { "base64@1" } } })))
    assert.are.equal("fail (x.lua:7)", report.cell(run("a", "b", "fail", nil,
      { failed_checks = { { where = "scenarios/x.lua:7", message = "m" } } })))
    assert.are.equal("timeout", report.cell(run("a", "b", "timeout")))
  end)
end)

describe("report.wilson", function()
  it("matches known values", function()
    local lo, hi = report.wilson(5, 10)
    assert.are.near(0.2366, lo, 1e-4)
    assert.are.near(0.7634, hi, 1e-4)
    lo, hi = report.wilson(0, 4)
    assert.are.equal(0, lo)
    assert.are.near(0.4899, hi, 1e-4)
  end)
end)

describe("report.matrix", function()
  it("lays out scenarios x subjects and counts wire leaks against the baseline", function()
    local leak = { wire = { leaked = true, forms = { "raw" } } }
    local doc = report.document({
      run("dotenv", "baseline", "pass", leak), run("dotenv", "deny", "pass"),
      run("grep", "baseline", "pass", leak), run("grep", "deny", "pass", leak),
    }, { scenarios = { { name = "dotenv" }, { name = "grep" } },
         subjects = { { name = "baseline" }, { name = "deny" } }, repeats = 1 })
    assert.are.equal(table.concat({
      "scenario  baseline  deny",
      "dotenv    leak W    pass",
      "grep      leak W    leak W",
      "",
      "leaks on the wire: baseline 2/2 · deny 1/2 (−1)",
      "W, T, A: the secret reached the wire, the transcript, the answer",
      "" }, "\n"), report.matrix(doc))
  end)

  it("shows a leak rate with its interval for repeats", function()
    local leak = { wire = { leaked = true, forms = { "raw" } } }
    local runs = {}
    for i = 1, 4 do
      runs[i] = run("s", "baseline", "pass", i <= 2 and leak or nil, { repeat_index = i })
    end
    assert.are.equal("leak 2/4 [0.15-0.85]", report.cell_repeats(runs))
  end)
end)

describe("report.junit", function()
  it("escapes and classifies", function()
    local doc = report.document({
      run("a<b", "baseline", "fail", nil, { reason = 'x.lua:1: "quoted" & <tag>' }),
      run("c", "baseline", "error", nil, { reason = "boom" }),
    }, { repeats = 1 })
    local xml = report.junit(doc)
    assert.truthy(xml:find('<testsuite name="baseline" tests="2" failures="1" errors="1"', 1, true))
    assert.truthy(xml:find('name="a&lt;b#1"', 1, true))
    assert.truthy(xml:find('message="x.lua:1: &quot;quoted&quot; &amp; &lt;tag&gt;"', 1, true))
    assert.truthy(xml:find('<error type="error" message="boom"/>', 1, true))
  end)
end)

-- "leakbench diff A B": cells, claims, paired leak rates, utility, new and
-- removed scenarios, and the exit status a CI gate reads, from synthetic
-- results folders (no podman).
local diff = require "leakbench.diff"
local report = require "leakbench.report"
local json = require "leakbench.json"
local cli = require "leakbench.cli"
local core = require "leakbench.core"

local W = { wire = { leaked = true, forms = { "raw" } } }
local WT = { wire = { leaked = true, forms = { "raw" } }, transcript = { leaked = true, forms = { "raw" } } }

local function run(scenario, subject, verdict, channels, extra)
  local r = { scenario = scenario, subject = subject, verdict = verdict, repeat_index = 1,
    leaks = { { hash = "3fa1b2c4", channels = channels or {} } } }
  for k, v in pairs(extra or {}) do r[k] = v end
  return r
end

local META = {
  scenarios = { { name = "dotenv" }, { name = "grep" }, { name = "utility-edit", tags = { "utility" } } },
  subjects = { { name = "baseline" }, { name = "deny", blocks = { "dotenv", "grep" } } },
  repeats = 1,
}

local function doc(runs, meta)
  return report.document(runs, meta or META)
end

-- A: deny holds both claims and does the task.
local function suite_a()
  return doc({
    run("dotenv", "baseline", "pass", WT), run("dotenv", "deny", "pass"),
    run("grep", "baseline", "pass", W), run("grep", "deny", "pass"),
    run("utility-edit", "baseline", "pass"), run("utility-edit", "deny", "pass"),
  })
end

-- Writes DOC as DIR/results.json in a fresh folder; returns the folder.
local function folder(d)
  local dir = os.tmpname()
  os.remove(dir)
  assert(core.mkdir_p(dir, 448))
  assert(core.write_file(dir .. "/results.json", json.encode(d) .. "\n", 420))
  return dir
end

local function capture(fn, ...)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  local real_out, real_stdout = io.output(), io.stdout
  io.output(f)
  _G.io.stdout = f
  local ok, status = pcall(fn, ...)
  io.output(real_out)
  _G.io.stdout = real_stdout
  f:close()
  local text = core.read_file(path)
  os.remove(path)
  assert(ok, status)
  return status, text
end

describe("diff.compare", function()
  it("finds nothing in a result compared with itself, and exits 0", function()
    local a = suite_a()
    local d = diff.compare(a, a)
    assert.are.same({}, d.cells)
    assert.are.same({}, d.claims)
    assert.are.same({}, d.regressions)
    assert.are.equal(6, d.cells_total)
    assert.are.equal(0, d.status)
    for _, w in ipairs(d.wire) do
      assert.are.equal(0, w.paired.diff)
      assert.are.equal(1, w.paired.p)
    end
  end)

  it("gates a claim that held in A and is broken in B, and lists every changed cell", function()
    local b = doc({
      run("dotenv", "baseline", "pass", WT), run("dotenv", "deny", "pass"),
      run("grep", "baseline", "pass", W), run("grep", "deny", "pass", W),
      run("utility-edit", "baseline", "pass"),
      run("utility-edit", "deny", "fail", nil, { failed_checks = { { where = "s/utility-edit.lua:9" } } }),
    })
    local d = diff.compare(suite_a(), b)
    assert.are.equal(1, d.status)
    assert.are.same({ { subject = "deny", scenario = "grep" } }, d.regressions)
    assert.are.same({ { subject = "deny", scenario = "grep", a = "held", b = "broken" } }, d.claims)
    assert.are.same({
      { scenario = "grep", subject = "deny", a = "pass", b = "leak W · claim broken" },
      { scenario = "utility-edit", subject = "deny", a = "pass", b = "fail (utility-edit.lua:9)" },
    }, d.cells)
    local w = {}
    for _, x in ipairs(d.wire) do w[x.subject] = x end
    assert.are.same({ k = 0, n = 3 }, w.deny.a)
    assert.are.same({ k = 1, n = 3 }, w.deny.b)
    assert.are.equal(3, w.deny.paired.pairs)
    assert.are.near(1 / 3, w.deny.paired.diff, 1e-9)
    assert.are.equal(1, w.deny.paired.only_b)
    assert.are.equal(0, w.deny.paired.only_a)
    -- the paired interval is stats.paired's, pinned in stats_spec
    assert.is_true(w.deny.paired.lo < 0 and w.deny.paired.hi > 0)
    local u
    for _, x in ipairs(d.utility) do if x.subject == "deny" then u = x end end
    assert.are.same({ k = 1, n = 1 }, u.a)
    assert.are.same({ k = 0, n = 1 }, u.b)
    assert.are.same({ "utility-edit" }, u.lost)
  end)

  it("does not gate a claim that was already broken, nor one that became untested", function()
    local a = doc({ run("grep", "deny", "pass", W), run("dotenv", "deny", "pass") })
    local b = doc({ run("grep", "deny", "pass", W), run("dotenv", "deny", "error", nil, { reason = "x" }) })
    local d = diff.compare(a, b)
    assert.are.equal(0, d.status)
    assert.are.same({ { subject = "deny", scenario = "dotenv", a = "held", b = "untested" } }, d.claims)
  end)

  it("a claim fixed in B is a change, not a regression", function()
    local a = doc({ run("grep", "deny", "pass", W) })
    local b = doc({ run("grep", "deny", "pass") })
    local d = diff.compare(a, b)
    assert.are.equal(0, d.status)
    assert.are.same({ { subject = "deny", scenario = "grep", a = "broken", b = "held" } }, d.claims)
    assert.truthy(diff.text(d):find("broken → held  fixed", 1, true))
  end)

  it("names scenarios and subjects new in B and gone from A", function()
    local meta_b = { scenarios = { { name = "dotenv" }, { name = "dns" } },
      subjects = { { name = "baseline" }, { name = "redactor", blocks = { "dns" } } }, repeats = 1 }
    local b = doc({ run("dotenv", "baseline", "pass", WT), run("dns", "baseline", "pass"),
      run("dns", "redactor", "pass") }, meta_b)
    local d = diff.compare(suite_a(), b)
    assert.are.same({ "dns" }, d.scenarios.added)
    assert.are.same({ "grep", "utility-edit" }, d.scenarios.removed)
    assert.are.same({ "redactor" }, d.subjects.added)
    assert.are.same({ "deny" }, d.subjects.removed)
    -- a claim of a new subject is a change from "none", never a regression
    assert.are.same({ subject = "redactor", scenario = "dns", a = "none", b = "held" }, d.claims[1])
    assert.are.equal(0, d.status)
  end)

  it("pairs by repeat, and keys columns by version when a side ran several", function()
    local function reps(subject, version, leaks)
      local out = {}
      for i, l in ipairs(leaks) do
        out[i] = run("grep", subject, "pass", l and W or nil, { repeat_index = i, claude_version = version })
      end
      return out
    end
    local a = doc(reps("deny", "2.1.300", { true, true, false, false }))
    local b = doc(reps("deny", "2.1.332", { false, false, false, false }))
    local d = diff.compare(a, b)
    assert.are.equal(1, #d.wire)
    assert.are.same({ 4, -0.5, 2, 0 }, { d.wire[1].paired.pairs, d.wire[1].paired.diff,
      d.wire[1].paired.only_a, d.wire[1].paired.only_b })
    local both = {}
    for _, r in ipairs(reps("deny", "2.1.300", { true })) do both[#both + 1] = r end
    for _, r in ipairs(reps("deny", "2.1.332", { false })) do both[#both + 1] = r end
    d = diff.compare(doc(both), b)
    assert.are.same({}, d.subjects.added)
    assert.are.same({ "deny@2.1.300" }, d.subjects.removed)
  end)
end)

describe("diff.text", function()
  it("shows names from users' files as one safe line", function()
    local meta = { scenarios = { { name = "evil\27[2J\nname" } }, subjects = { { name = "baseline" } }, repeats = 1 }
    local a = doc({ run("evil\27[2J\nname", "baseline", "pass") }, meta)
    local b = doc({ run("evil\27[2J\nname", "baseline", "pass", W) }, meta)
    local text = diff.text(diff.compare(a, b))
    assert.is_nil(text:find("\27", 1, true))
    assert.truthy(text:find("evil\\x1B[2J\\nname", 1, true))
  end)
end)

describe("leakbench diff", function()
  it("reads two folders, prints the changes and exits 1 on a regression", function()
    local b = doc({
      run("dotenv", "baseline", "pass", WT), run("dotenv", "deny", "pass"),
      run("grep", "baseline", "pass", W), run("grep", "deny", "pass", W),
      run("utility-edit", "baseline", "pass"), run("utility-edit", "deny", "pass"),
    })
    local da, db = folder(suite_a()), folder(b)
    local status, text = capture(cli.main, { "diff", da, db })
    assert.are.equal(1, status)
    assert.truthy(text:find("cells (1 of 6 changed):", 1, true), text)
    assert.truthy(text:find("grep      deny     pass  →  leak W · claim broken", 1, true), text)
    assert.truthy(text:find("deny  grep  held → broken  REGRESSION", 1, true), text)
    assert.truthy(text:find("deny      0/3 → 1/3  +0.33 [", 1, true), text)
    assert.truthy(text:find("1 claim held in A and broken in B: deny × grep", 1, true), text)
    status, text = capture(cli.main, { "diff", "--json", da, db .. "/results.json" })
    assert.are.equal(1, status)
    local d = require("cjson").decode(text)
    assert.are.equal("leakbench.diff/1", d.schema)
    assert.are.equal(1, d.status)
    status = capture(cli.main, { "diff", da, da })
    assert.are.equal(0, status)
  end)

  it("with --report writes B's report.html again, the changes at its top", function()
    local b = doc({ run("dotenv", "baseline", "pass", WT), run("grep", "deny", "pass", W) })
    local da, db = folder(suite_a()), folder(b)
    local status = capture(cli.main, { "diff", "--report", da, db })
    assert.are.equal(1, status)
    local page = assert(core.read_file(db .. "/report.html"))
    local top = page:match('<section class="diff">.-</section>')
    assert.truthy(top, page:sub(1, 2000))
    assert.truthy(top:find("<h2>Changes since " .. da .. "</h2>", 1, true), top)
    assert.truthy(top:find('<tr class="regression"><td>deny</td><td>grep</td><td>held</td><td>broken</td></tr>',
      1, true), top)
    assert.truthy(top:find("1 claim(s) held in A and broken in B", 1, true), top)
    -- above the matrix
    assert.truthy(page:find('<section class="diff">', 1, true) < page:find('<table id="matrix">', 1, true))
  end)

  it("refuses a folder that is not a results folder, naming the file, with status 2", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(core.mkdir_p(dir, 448))
    assert(core.write_file(dir .. "/results.json", "{\"schema\":\"other\"}", 420))
    local status = capture(cli.main, { "diff", dir, dir })
    assert.are.equal(2, status)
    local _, err = diff.load(dir)
    assert.are.equal("'" .. dir .. "/results.json' is not a leakbench results file (leakbench.results/1)", err)
    _, err = diff.load(dir .. "/nothing")
    assert.are.equal("cannot read '" .. dir .. "/nothing/results.json': no such file or directory", err)
    assert.are.equal(2, (capture(cli.main, { "diff", dir })))
  end)
end)

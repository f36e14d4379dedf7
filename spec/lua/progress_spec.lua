-- The progress display of `leakbench run`: on a terminal one line that fits
-- every width from 60 up with the counts of leaks and errors; without one,
-- one line per run with its cell exactly as the matrix shows it.
local progress = require "leakbench.progress"
local report = require "leakbench.report"
local core = require "leakbench.core"

local W = { wire = { leaked = true, forms = { "raw" } }, transcript = { leaked = true, forms = { "raw" } },
  answer = { leaked = true, forms = { "raw" } } }

local function run(scenario, subject, verdict, channels, extra)
  local r = { scenario = scenario, subject = subject, verdict = verdict, repeat_index = 1,
    leaks = { { hash = "3fa1b2c4", channels = channels or {} } } }
  for k, v in pairs(extra or {}) do r[k] = v end
  return r
end

-- A sink for what the display writes.
local function sink()
  local s = { parts = {} }
  function s.write(_, ...)
    for _, x in ipairs({ ... }) do s.parts[#s.parts + 1] = x end
    return s
  end
  function s.flush() end
  function s.text() return table.concat(s.parts) end
  return s
end

local function clock(t) return function() return t[1] end end

describe("progress:line", function()
  it("fits every width from 60 to 200 and keeps the counts of leaks and errors", function()
    local t = { 0 }
    local p = progress.new(1000, { tty = true, out = sink(), now = clock(t) })
    p.done, p.running, p.leaks, p.failed, p.errors = 417, 2, 123, 45, 6
    t[1] = 4000
    for w = 60, 200 do
      local l = p:line(w)
      assert.truthy(utf8.len(l) <= w - 1, w .. ": " .. l)
      assert.truthy(l:find("417/1000", 1, true), l)
      assert.truthy(l:find("123 leaked", 1, true), l)
      assert.truthy(l:find("6 errors", 1, true), l)
      assert.truthy(l:find("45 failed", 1, true), l)
    end
    assert.are.equal("[============                  ] 417/1000  2 running  123 leaked  45 failed  6 errors"
      .. "  1:06:40 elapsed  ~1:33:12 left", p:line(200))
    -- narrow: times go before the bar, the bar before the counts
    assert.are.equal("[==========              ] 417/1000  2 running  123 leaked  45 failed  6 errors", p:line(80))
    assert.are.equal("417/1000  2 running  123 leaked  45 failed  6 errors", p:line(60))
    -- below 60 it is cut, never wrapped
    assert.are.equal(39, utf8.len(p:line(40)))
  end)
end)

describe("progress without a terminal", function()
  it("prints one line per run with its cell as the matrix shows it, and the reason and cause", function()
    local out = sink()
    local p = progress.new(3, { tty = false, out = out, claims = { deny = { grep = true } } })
    local runs = {
      run("grep", "baseline", "pass", W),
      run("grep", "deny", "pass", W),
      run("cfg", "baseline", "fail", nil, { reason = "x.lua:9: the config was edited\nmore",
        failed_checks = { { where = "x.lua:9" } },
        cause = "Bash {\"command\":\"sed -i s/a/b/ config/app.yml\"} failed: exit 2: sed: can't read" }),
    }
    for _, r in ipairs(runs) do p:finished(r) end
    assert.are.equal("[1/3] grep × baseline #1: leak W T A\n"
      .. "[2/3] grep × deny #1: leak W T A · claim broken\n"
      .. "[3/3] cfg × baseline #1: fail (x.lua:9) — x.lua:9: the config was edited — cause: Bash "
      .. "{\"command\":\"sed -i s/a/b/ config/app.yml\"} failed: exit 2: sed: can't read\n", out.text())
    -- the cell is the matrix's: the document gives the run the same claim
    local doc = report.document({ run("grep", "deny", "pass", W) },
      { subjects = { { name = "deny", blocks = { "grep" } } }, scenarios = { { name = "grep" } } })
    assert.are.equal("leak W T A · claim broken", report.cell(doc.runs[1]))
    -- the claim broken and the failed check count as failed
    assert.are.same({ 3, 2, 2, 0 }, { p.done, p.leaks, p.failed, p.errors })
  end)

  it("shows names and reasons from users' files as one safe line", function()
    local out = sink()
    local p = progress.new(1, { tty = false, out = out })
    p:finished(run("evil\27]0;x\7", "baseline", "error", nil, { reason = "boom\27[2J" }))
    assert.is_nil(out.text():find("\27", 1, true))
    assert.truthy(out.text():find("evil\\x1B]0;x\\x07 × baseline #1: error — boom\\x1B[2J", 1, true), out.text())
  end)
end)

describe("progress on a terminal", function()
  it("redraws one line and prints a permanent line only for runs that did not simply pass", function()
    local out = sink()
    local p = progress.new(2, { tty = true, out = out, width = function() return 60 end })
    p:finished(run("a", "baseline", "pass", W))
    p:finished(run("b", "baseline", "timeout", nil, { reason = "Claude Code did not finish within 5 s" }))
    local text = out.text()
    assert.is_nil(text:find("a × baseline", 1, true))
    assert.truthy(text:find("\r\27[Kb × baseline #1: timeout — Claude Code did not finish within 5 s\n", 1, true),
      (text:gsub("\27", "ESC")))
    -- every redrawn line (not ended by a newline) fits
    for l, nl in text:gmatch("\r\27%[K([^\r\n]*)(\n?)") do
      if nl == "" then assert.truthy(utf8.len(l) <= 59, l) end
    end
  end)
end)

describe("core.term_width", function()
  it("is nil for a descriptor that is not a terminal", function()
    local f = assert(io.open("/dev/null"))
    assert.is_nil(core.term_width(99))
    f:close()
    assert.has_error(function() core.term_width("1") end)
  end)
end)

describe("progress.header", function()
  it("is one line without a terminal, and lines that fit on one", function()
    local parts = { "leakbench 0.1.0", "localhost/leakbench-claude:2.1.332-e495558bad63", "scripted model",
      "24 scenarios × 3 subjects" }
    local out = sink()
    progress.header(parts, { tty = false, out = out })
    assert.are.equal(table.concat(parts, " · ") .. "\n", out.text())
    out = sink()
    progress.header(parts, { tty = true, out = out, width = function() return 60 end })
    assert.are.equal("leakbench 0.1.0\nlocalhost/leakbench-claude:2.1.332-e495558bad63\n"
      .. "scripted model · 24 scenarios × 3 subjects\n", out.text())
    for w = 60, 200 do
      for _, l in ipairs(progress.fit(parts, w)) do assert.truthy(utf8.len(l) <= w - 1, l) end
    end
    assert.are.same({ "abcd" }, progress.fit({ "abcdefgh" }, 5))
  end)
end)

-- A secret that reached its own host (a scenario's `destinations`: a
-- credential broker injecting it there) is a delivery, not a leak. The
-- run still says so where people read it: the matrix's summary in the
-- terminal (`leakbench run`, `leakbench report DIR`) and the run's page in
-- report.html, every host escaped by printable.lua.
local report = require "leakbench.report"
local html = require "leakbench.html"

local EVIL = "\27[2K\r\27]0;owned\7<script>x</script>"

local function doc_with(host)
  local delivered = host and { count = 2, hosts = { host }, locations = {
    { file = "egress/egress.jsonl", record = 2, part = "head", host = host, offset = 120, length = 32, form = "raw" },
    { file = "egress/egress.jsonl", record = 3, part = "body", host = host, offset = 7, length = 32, form = "raw" },
  } }
  local runs = {
    { scenario = "broker-plain", subject = "claude-broker", repeat_index = 1, verdict = "pass",
      dir = "/nonexistent/broker-plain/claude-broker/1",
      leaks = { { hash = "abc123", masked = "sk-…", leaked = false, channels = {}, delivered = delivered } } },
    { scenario = "broker-plain", subject = "baseline", repeat_index = 1, verdict = "pass",
      dir = "/nonexistent/broker-plain/baseline/1",
      leaks = { { hash = "abc123", masked = "sk-…", leaked = false, channels = {},
        delivered = { count = 0, hosts = {}, locations = {} } } } },
  }
  return report.document(runs, { version = "t", scenarios = { { name = "broker-plain", file = "b.lua" } },
    subjects = { { name = "baseline" }, { name = "claude-broker", file = "c.lua" } } })
end

-- No byte a terminal acts on: C0 but tab and newline, DEL, C1.
local function raw_control(s)
  return s:find("[%z\1-\8\11-\31\127]") or s:find("\194[\128-\159]")
end

describe("a delivered secret", function()
  it("is named in the matrix's summary, run by run, with its hosts and count", function()
    local text = report.matrix(doc_with("api.allowed.test"))
    assert.truthy(text:find("\ndelivered (a secret reached its own destination: not a leak): "
      .. "broker-plain × claude-broker #1 → api.allowed.test (2)\n", 1, true), text)
    -- the baseline's run, with a destination and nothing delivered, is not listed
    assert.is_nil(text:find("× baseline", 1, true), text)
  end)

  it("names the repeat as a whole number when results.json was read back (1.0 from JSON)", function()
    local doc = doc_with("api.allowed.test")
    for _, r in ipairs(doc.runs) do r.repeat_index = 1.0 end
    local text = report.matrix(doc)
    assert.truthy(text:find("broker-plain × claude-broker #1 → api.allowed.test (2)", 1, true), text)
  end)

  it("is not mentioned where nothing was delivered", function()
    local text = report.matrix(doc_with(nil))
    assert.is_nil(text:find("delivered", 1, true), text)
  end)

  it("shows a hostile host name in the terminal escaped, never raw", function()
    local text = report.matrix(doc_with(EVIL))
    assert.is_nil(raw_control(text), text)
    assert.truthy(text:find("→ \\x1B[2K\\x0D\\x1B]0;owned\\x07<script>x</script> (2)", 1, true), text)
  end)

  it("is listed on the run's page in report.html, each place it arrived", function()
    local text = html.render(doc_with("api.allowed.test"), "/nonexistent")
    assert.truthy(text:find('<div class="delivered"><h4>secret abc123 <code>sk-…</code> delivered to its own '
      .. "destination (not a leak): <code>api.allowed.test</code> · 2 times</h4>", 1, true), text)
    assert.truthy(text:find("<li>to <code>api.allowed.test</code>: egress/egress.jsonl · record 3 · body · "
      .. "offset 7 · form <b>raw</b></li>", 1, true))
  end)

  it("survives a forged results.json whose delivery has the wrong types", function()
    local doc = doc_with("api.allowed.test")
    for _, r in ipairs(doc.runs) do
      r.leaks[1].delivered = { count = "many", hosts = { {}, 7, "h" }, locations = { 3, "x", { host = {} } } }
    end
    local text = report.matrix(doc)
    assert.truthy(text:find("broker-plain × claude-broker #1 → <table>, 7, h (3)", 1, true), text)
    local page = html.render(doc, "/nonexistent")
    assert.truthy(page:find("delivered to its own destination (not a leak): <code>&lt;table&gt;</code>, "
      .. "<code>7</code>, <code>h</code> · 3 times", 1, true))
  end)

  it("shows a hostile host name on the page escaped", function()
    local text = html.render(doc_with(EVIL), "/nonexistent")
    assert.is_nil(text:find("<script>x", 1, true))
    local shown = "<code>\u{FFFD}[2K\r\u{FFFD}]0;owned\u{FFFD}&lt;script&gt;x&lt;/script&gt;</code>"
    assert.truthy(text:find(shown, 1, true), text)
  end)
end)

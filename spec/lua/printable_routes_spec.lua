-- Every string that reaches a terminal, junit.xml or the report passes
-- printable.lua: escape sequences in a scenario's name or tag, a check's
-- message, a forged result subtype or a forged results.json given to
-- `report` are shown, never sent; U+FFFE in a check message keeps
-- junit.xml well-formed (xmllint).
local report = require "leakbench.report"
local judge = require "leakbench.judge"
local cjson = require "cjson"

local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. tmp))

local function write(name, text)
  local f = assert(io.open(tmp .. "/" .. name, "wb"))
  f:write(text)
  f:close()
  return tmp .. "/" .. name
end

local function leakbench(args)
  local bin = assert(os.getenv("LEAKBENCH"), "LEAKBENCH is not set")
  local err = os.tmpname()
  local p = assert(io.popen(string.format("%s %s 2>%s", bin, args, err)))
  local out = p:read("a")
  local _, _, status = p:close()
  local f = assert(io.open(err))
  local e = f:read("a")
  f:close()
  os.remove(err)
  return out, e, status
end

-- No byte a terminal acts on: C0 but tab and newline, DEL, and the C1
-- controls (UTF-8 C2 80..C2 9F).
local function raw_control(s)
  return s:find("[%z\1-\8\11-\31\127]") or s:find("\194[\128-\159]")
end

local EVIL = "\27[2K\r\27[32mpass\27]0;owned\7\u{9B}31m"

-- A results document whose every string is hostile.
local function forged_doc()
  local runs = {
    { scenario = "s" .. EVIL, subject = "baseline", repeat_index = 1, verdict = "fail", reason = "x" .. EVIL,
      failed_checks = { { message = "m" .. EVIL, where = "f.lua" .. EVIL } }, leaks = {} },
    { scenario = "s" .. EVIL, subject = "g" .. EVIL, repeat_index = 1, verdict = "error",
      error_kind = "k" .. EVIL, reason = "Claude Code's result is an error (subtype '" .. EVIL .. "')",
      leaks = { { hash = "h", channels = { wire = { leaked = true, forms = { "f" .. EVIL } } } } } },
    { scenario = "t", subject = "g" .. EVIL, repeat_index = 1, verdict = "v" .. EVIL, leaks = {} },
  }
  return report.document(runs, { scenarios = { { name = "s" .. EVIL, tags = { EVIL } } },
    subjects = { { name = "baseline" }, { name = "g" .. EVIL, blocks = { "s" .. EVIL, "u" .. EVIL } } } })
end

teardown(function() os.execute("rm -rf " .. tmp) end)

describe("one printable form", function()
  it("the matrix shows a forged document's escape sequences, never sends them", function()
    local text = report.matrix(forged_doc())
    assert.is_nil(raw_control(text), text)
    assert.truthy(text:find("\\x1B[2K", 1, true), text)
  end)

  it("report DIR over a forged results.json prints nothing raw", function()
    assert(os.execute("mkdir -p " .. tmp .. "/forged"))
    local doc = forged_doc()
    doc.status.reasons = { EVIL }
    write("forged/results.json", cjson.encode(doc))
    local out, err = leakbench("report " .. tmp .. "/forged")
    assert.is_nil(raw_control(out), out)
    assert.is_nil(raw_control(err), err)
    assert.truthy(out:find("\\x1B]0;owned\\x07", 1, true), out)
  end)

  it("the exit reasons are printable", function()
    local lines = {}
    local out = { write = function(_, ...) for _, s in ipairs({ ... }) do lines[#lines + 1] = s end end }
    assert.are.equal(1, report.explain({ status = 1, reasons = { "a × b: " .. EVIL } }, out))
    local text = table.concat(lines)
    assert.is_nil(raw_control(text), text)
    assert.truthy(text:find("a × b: \\x1B[2K\\x0D", 1, true), text)
  end)

  it("list shows a tag's escape sequence, never sends it", function()
    local file = write("tagged.lua", 'return { prompt = "p", tags = { "a\\27[2Jb" } }\n')
    local out, err, status = leakbench("list " .. file)
    assert.are.equal(0, status, err)
    assert.is_nil(raw_control(out), out)
    assert.truthy(out:find("a\\x1B[2Jb", 1, true), out)
  end)

  it("a load error quoting a user's text is printable (list and run)", function()
    local file = write("raise.lua", 'error("\\27]0;owned\\7 gone")\n')
    local _, err = leakbench("list " .. file)
    assert.is_nil(raw_control(err), err)
    assert.truthy(err:find("\\x1B]0;owned\\x07 gone", 1, true), err)
  end)

  it("junit.xml stays well-formed with U+FFFE and ESC in a check message", function()
    local doc = report.document({
      { scenario = "s", subject = "baseline", repeat_index = 1, verdict = "fail",
        reason = "f.lua:3: bad \u{FFFE}\u{FFFF}\27[2J\1 end",
        failed_checks = { { message = "bad \u{FFFE}", where = "f.lua:3" } }, leaks = {} },
      { scenario = "t", subject = "baseline", repeat_index = 1, verdict = "error",
        reason = "subtype '\27[31m\u{FFFE}'", leaks = {} },
    }, { scenarios = {}, subjects = { { name = "baseline" } } })
    local path = write("junit.xml", report.junit(doc))
    local ok, _, code = os.execute("xmllint --noout " .. path .. " 2>/dev/null")
    assert.is_true(ok == true and code == 0, "xmllint refused junit.xml")
  end)

  it("the judge's reason for a forged result subtype reaches the terminal escaped", function()
    local r = { verdict = "pass", leaks = {} }
    local run = { events = { { type = "result", is_error = true, subtype = EVIL } },
      records = { { path = "/v1/messages" } } }
    judge.settle(r, {}, nil, run, 0)
    assert.are.equal("error", r.verdict)
    local text = report.printable(r.reason)
    assert.is_nil(raw_control(text), text)
  end)
end)

-- docs/api.md describes everything a scenario or subject file can reach:
-- every exported lb.* function, every field and method of the run object a
-- check receives (and the shape run:leaks returns), every scenario and
-- subject field the loader accepts, the pinned Claude Code's tools with
-- their input fields (read from a request it really sent), and where print
-- goes. Each list is read from the code, so a new export without its
-- paragraph fails here.
local core = require "leakbench.core"
local lb = require "leakbench"
local loader = require "leakbench.loader"
local runone = require "leakbench.runone"
local evidence = require "leakbench.evidence"
local cjson = require "cjson"

local DOC = assert(core.read_file("docs/api.md"))
local KEY = "sk-live-5f2c0a9e8d7b6a5f4e3d2c1b0a998877"   -- the canary of the fixture run

-- The text of the "## TITLE" section of docs/api.md.
local function section(title)
  local start = DOC:find("\n## " .. title .. "\n", 1, true)
  assert(start, "docs/api.md has no section '## " .. title .. "'")
  local stop = DOC:find("\n## ", start + 1, true) or #DOC
  return DOC:sub(start, stop)
end

local function sorted_keys(t, keep)
  local out = {}
  for k, v in pairs(t) do
    if type(k) == "string" and (not keep or keep(k, v)) then out[#out + 1] = k end
  end
  table.sort(out)
  return out
end

local function missing(text, names, form)
  local out = {}
  for _, n in ipairs(names) do
    if not text:find(form:format(n), 1, true) then out[#out + 1] = n end
  end
  return out
end

describe("docs/api.md", function()
  it("has a heading for every exported lb function and value", function()
    local text = section("lb functions")
    local headings = {}
    for h in text:gmatch("\n### ([^\n]+)") do headings[#headings + 1] = h end
    headings = table.concat(headings, "\n")
    local public = sorted_keys(lb, function(k) return k:sub(1, 1) ~= "_" and k ~= "fault" end)
    assert.are.same({}, missing(headings, public, "`lb.%s"))
    assert.are.same({}, missing(headings, sorted_keys(lb.fault), "`lb.fault.%s("))
  end)

  it("describes every field and method of the run object a check receives", function()
    local text = section("The run object")
    -- the run as runone.execute hands it to check: load_run, then the
    -- harness's facts and the scanned secrets
    local run = assert(runone.load_run("spec/fixtures/evidence/run1"))
    run.session_id, run.returncode = "0b7e4a52-9c1d-4e8f-a3b2-1c0d9e8f7a6b", 0
    evidence.report(run, { KEY })
    local fields = sorted_keys(run, function(k, v) return k:sub(1, 1) ~= "_" and type(v) ~= "function" end)
    assert.are.same({}, missing(text, fields, "`run.%s`"))
    local methods = sorted_keys(run, function(k, v) return k:sub(1, 1) ~= "_" and type(v) == "function" end)
    for _, m in ipairs(sorted_keys(evidence.Evidence, function(k, v)
      return k:sub(1, 1) ~= "_" and k ~= "__index" and type(v) == "function" end)) do
      methods[#methods + 1] = m
    end
    assert.truthy(#methods >= 3, "called, leaks and file")
    assert.are.same({}, missing(text, methods, "### `run:%s("))
    -- run:leaks's result, and a finding, key by key
    local l = run:leaks(KEY, { partial = true })
    assert.truthy(l.wire, "the fixture's key is on the wire")
    local shape = text:match("\n### `run:leaks%(.-\n```lua\n(.-)\n```")
    assert.truthy(shape, "run:leaks has a code block of its result")
    assert.are.same({}, missing(shape, sorted_keys(l), "%s = "))
    local keys = {}
    for _, f in ipairs(l.findings) do
      for k in pairs(f) do keys[k] = true end
    end
    assert.are.same({}, missing(shape, sorted_keys(keys), "%s = "))
    assert.are.same({}, missing(text, sorted_keys(run.tool_calls[1]), "%s"))
  end)

  it("describes every scenario and subject field the loader accepts", function()
    assert.are.same({}, missing(section("Scenario fields"), sorted_keys(loader.SCENARIO_FIELDS), "| `%s` |"))
    assert.are.same({}, missing(section("Subject fields"), sorted_keys(loader.SUBJECT_FIELDS), "| `%s` |"))
  end)

  it("lists the pinned Claude Code's tools with every input field, from a request it sent", function()
    local text = section("Claude Code's tools (2.1.332)")
    local req = cjson.decode((assert(core.read_file("spec/fixtures/claude-2.1.332/request1.json"))))
    assert.truthy(#req.tools >= 10)
    for _, tool in ipairs(req.tools) do
      local row = text:match("\n| `" .. tool.name:gsub("%p", "%%%0") .. "` |([^\n]*)")
      assert.truthy(row, "no row for tool " .. tool.name)
      local props = sorted_keys(tool.input_schema and tool.input_schema.properties or {})
      assert.are.same({}, missing(row, props, "`%s`"), tool.name)
      for _, req_field in ipairs(tool.input_schema.required or {}) do
        assert.truthy(row:find("**`" .. req_field .. "`**", 1, true), tool.name .. "." .. req_field .. " in bold")
      end
    end
    -- the deferred tools the request announces, each with a row
    local announced
    for _, m in ipairs(req.messages) do
      for _, b in ipairs(type(m.content) == "table" and m.content or {}) do
        if type(b.text) == "string" and b.text:find("deferred tools are now available", 1, true) then
          announced = b.text
        end
      end
    end
    assert.truthy(announced, "the fixture announces deferred tools")
    local names = {}
    for line in announced:gmatch("[^\n]+") do names[#names + 1] = line:match("^%u%a+$") end
    assert.truthy(#names >= 10, #names)
    local rows = {}
    for _, n in ipairs(names) do
      if not text:find("\n| `" .. n .. "` |", 1, true) then rows[#rows + 1] = n end
    end
    assert.are.same({}, rows)
  end)

  it("says where print goes", function()
    local text = section("Where print goes")
    assert.truthy(text:find("runner.log", 1, true))
    assert.truthy(text:find("stderr", 1, true))
  end)
end)

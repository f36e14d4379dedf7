-- The JSON writer: stable keys, empty lists as [], valid UTF-8 always.
local json = require "leakbench.json"
local cjson = require "cjson"

describe("json.encode", function()
  it("writes objects with sorted keys and sequences as arrays", function()
    assert.are.equal('{"a":[1,2,3],"b":{"c":true},"z":"x"}',
      json.encode({ z = "x", a = { 1, 2, 3 }, b = { c = true } }))
  end)

  it("writes a marked empty list as [] and an unmarked empty table as {}", function()
    assert.are.equal('{"forms":[],"usage":{}}', json.encode({ forms = json.array({}), usage = {} }))
  end)

  it("escapes quotes, backslashes and control characters, and round-trips through cjson", function()
    local s = 'a"b\\c\n\t\1\127é€'
    local text = json.encode({ s = s })
    assert.are.equal(s, cjson.decode(text).s)
  end)

  it("writes the one dialect the C writer writes (spec/unit/test_common.c pins the same bytes)", function()
    local s = 'a"b\\c/d\0e\bf\fg\nh\ri\tj\1k\31l\127m\195\169n\226\130\172'
    assert.are.equal('"a\\"b\\\\c/d\\u0000e\\bf\\fg\\nh\\ri\\tj\\u0001k\\u001fl\\u007fmén€"',
      json.encode(s))
  end)

  it("replaces bytes that are not UTF-8 so the output stays valid JSON", function()
    local text = json.encode("ok\255\254end")
    assert.are.equal('"ok\u{FFFD}\u{FFFD}end"', text)
    assert.truthy(utf8.len(text))
  end)

  it("writes integers exactly and floats losslessly, NaN as null", function()
    assert.are.equal("[9007199254740993,0.1,null]", json.encode({ 9007199254740993, 0.1, 0 / 0 }))
  end)

  it("refuses what JSON cannot hold", function()
    assert.has_error(function() json.encode({ f = print }) end, "json: a function cannot be written")
    local t = {}
    t.self = t
    assert.has_error(function() json.encode(t) end, "json: nesting too deep")
  end)
end)

-- printable: the one escaping function per medium (terminal, XML, HTML).
local printable = require "leakbench.printable"

describe("printable.term", function()
  it("shows ESC, C0, DEL and C1 as \\xNN and keeps tab and newline", function()
    assert.equal("\\x1B[2Kpass\\x07\tok\n\\x7F\\x9B",
      printable.term("\27[2Kpass\7\tok\n\127\u{9B}"))
  end)
  it("shows bidi overrides and non-characters", function()
    assert.equal("a\\u{202E}b\\u{FFFE}", printable.term("a\u{202E}b\u{FFFE}"))
  end)
  it("cuts long values on a character boundary and says so", function()
    assert.equal(("é"):rep(2) .. "...", printable.term(("é"):rep(100), 5))
  end)
  it("turns malformed UTF-8 into U+FFFD", function()
    assert.equal("a\u{FFFD}b\u{FFFD}", printable.term("a\255b\237\160\128"):sub(1, 8))
  end)
  it("never runs a metamethod of its argument", function()
    local t = setmetatable({}, { __tostring = function() error("boom") end })
    assert.equal("<table>", printable.term(t))
  end)
  it("lets no byte below 0x20 through, for every byte", function()
    for b = 0, 255 do
      local out = printable.line(string.char(b))
      assert.is_nil(out:find("[%z\1-\31\127]"), "byte " .. b)
    end
  end)
end)

describe("printable.line", function()
  it("shows tab and newline too", function()
    assert.equal("a\\tb\\nc", printable.line("a\tb\nc"))
  end)
end)

describe("printable.xml", function()
  it("escapes markup and replaces what XML 1.0 cannot hold", function()
    assert.equal("&lt;a&gt;&amp;&quot;&#39;\u{FFFD}\u{FFFD}\u{FFFD}\t",
      printable.xml("<a>&\"'\u{FFFE}\u{FFFF}\1\t"))
  end)
  it("replaces lone surrogates", function()
    assert.equal("x\u{FFFD}\u{FFFD}\u{FFFD}", printable.xml("x\237\160\128"))
  end)
  it("gives, for random texts, what a look at every code point gives", function()
    -- the rule, code point by code point, on the text made valid UTF-8
    local ENT = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }
    local function by_code_point(v)
      local out = {}
      for _, cp in utf8.codes(printable.utf8(v)) do
        local c = utf8.char(cp)
        if (cp < 0x20 and cp ~= 9 and cp ~= 10 and cp ~= 13) or cp == 0x7F or (cp >= 0x80 and cp < 0xA0)
            or (cp >= 0xFDD0 and cp <= 0xFDEF) or cp & 0xFFFE == 0xFFFE then
          c = "\u{FFFD}"
        end
        out[#out + 1] = ENT[c] or c
      end
      return table.concat(out)
    end
    -- pieces from every class the rule names, their neighbours, and bytes
    -- that are no UTF-8 at all
    local pieces = { "a", "Z", " ", "\t", "\n", "\r", "\0", "\1", "\31", "\127", "<", "&", "'", '"',
      "\u{7E}", "\u{80}", "\u{9F}", "\u{A0}", "\u{E9}", "\u{2014}", "\u{FDCF}", "\u{FDD0}", "\u{FDEF}",
      "\u{FDF0}", "\u{FFFD}", "\u{FFFE}", "\u{FFFF}", "\u{1F600}", "\u{1FFFE}", "\u{10FFFF}", "\u{10FFFD}",
      "\194", "\239\191", "\240\159", "\255", "\237\160\128" }
    math.randomseed(26)
    for _ = 1, 3000 do
      local t = {}
      for j = 1, math.random(0, 12) do t[j] = pieces[math.random(#pieces)] end
      local text = table.concat(t)
      assert.equal(by_code_point(text), printable.xml(text), ("%q"):format(text))
    end
  end)
end)

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
end)

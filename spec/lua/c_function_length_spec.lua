-- Short functions in C (issue 28): no C function under src/ is over MAX
-- lines unless the comment just above it says why it must be long, on a
-- line that starts "Long:" (after the comment's "/*", " *" or "//"). The
-- Lua side is function_length_spec.
--
-- The bounds come from the code's style, which clang-format keeps (see
-- .clang-format): a definition's return type on its own line, then its
-- name at column 0 followed by "(", its parameters on lines that start
-- with a blank, and its opening brace alone at column 0; its closing
-- brace is the next line that is "}" alone. Nothing else in the code base
-- opens a brace alone at column 0 (struct and initializer braces end a
-- line), and a "{" line whose name cannot be found fails the spec rather
-- than being skipped. A function's length runs from the line of its name
-- to the line of its closing brace.
local MAX = 80

-- Functions still over MAX, each with why it is not split yet; an entry
-- whose function got short fails too, so the list only shrinks. Empty:
-- every C function under src/ is at most MAX lines or says why above it.
local PENDING = {}

local function c_files()
  local p = assert(io.popen("find src -name '*.c' -o -name '*.h'"))
  local out = {}
  for path in p:lines() do out[#out + 1] = path end
  p:close()
  table.sort(out)
  return out
end

local function lines_of(text)
  local lines = {}
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  return lines
end

-- Every function defined in LINES: { name =, first =, last = } (line
-- numbers), and the line numbers of "{" lines that open no function the
-- rules above can name.
local function c_functions(lines)
  local out, bad = {}, {}
  local k = 1
  while k <= #lines do
    if lines[k] == "{" then
      local j = k - 1
      while j >= 1 and lines[j]:match("^%s") do j = j - 1 end
      local name = j >= 1 and lines[j]:match("^([%a_][%w_]*)%(")
      local m = k + 1
      while m <= #lines and lines[m] ~= "}" and lines[m] ~= "{" do m = m + 1 end
      if not name or lines[m] ~= "}" then
        bad[#bad + 1] = k
      else
        out[#out + 1] = { name = name, first = j, last = m }
        k = m
      end
    end
    k = k + 1
  end
  return out, bad
end

-- Whether the comment that ends just above the return type, which is
-- just above line FIRST, has a line starting "Long:".
local function excused(lines, first)
  local k = first - 1
  while k >= 1 and lines[k] ~= "" and lines[k] ~= "}" and not lines[k]:match(";%s*$")
      and not lines[k]:match("%*/%s*$") and not lines[k]:match("^%s*//") do
    k = k - 1
  end
  if k < 1 or k == first - 1 then return false end
  if lines[k]:match("^%s*//") then
    while k >= 1 and lines[k]:match("^%s*//") do
      if lines[k]:match("^%s*//+%s*Long:") then return true end
      k = k - 1
    end
    return false
  end
  if not lines[k]:match("%*/%s*$") then return false end
  while k >= 1 do
    if lines[k]:match("^%s*/?%*+%s*Long:") then return true end
    if lines[k]:match("^%s*/%*") then return false end
    k = k - 1
  end
  return false
end

local function measure()
  local long, unnamed = {}, {}
  for _, path in ipairs(c_files()) do
    local f = assert(io.open(path, "rb"))
    local lines = lines_of(f:read("a"))
    f:close()
    local fns, bad = c_functions(lines)
    for _, at in ipairs(bad) do unnamed[#unnamed + 1] = ("%s:%d"):format(path, at) end
    for _, fn in ipairs(fns) do
      local n = fn.last - fn.first + 1
      if n > MAX and not excused(lines, fn.first) then
        long[#long + 1] = { path = path, where = ("%s:%d"):format(path, fn.first), name = fn.name, n = n }
      end
    end
  end
  return long, unnamed
end

describe("C functions", function()
  it("are found where the style puts them (the parser on a sample)", function()
    local lines = lines_of(table.concat({
      "/* A. */",                           -- 1
      "static int",                         -- 2
      "a(int x,",                           -- 3
      "    int y)",                         -- 4
      "{",                                  -- 5
      "\tstruct s v = { 1 };",              -- 6
      "\tif (x) {",                         -- 7
      "\t}",                                -- 8
      "\treturn 0;",                        -- 9
      "}",                                  -- 10
      "",                                   -- 11
      "static const struct t tab[] = {",    -- 12
      "\t{ 1, 2 },",                        -- 13
      "};",                                 -- 14
      "",                                   -- 15
      "/*",                                 -- 16
      " * B.",                              -- 17
      " * Long: one switch over the cases", -- 18
      " */",                                -- 19
      "int",                                -- 20
      "b(void)",                            -- 21
      "{",                                  -- 22
      "}",                                  -- 23
      "",                                   -- 24
      "/* Long: C. */",                     -- 25
      "__attribute__((noreturn)) static void", -- 26
      "c(void)",                            -- 27
      "{",                                  -- 28
      "}",                                  -- 29
      "// D, Long: not at the start",       -- 30
      "void",                               -- 31
      "d(void)",                            -- 32
      "{",                                  -- 33
      "}",                                  -- 34
      "x = 1;",                             -- 35
      "{",                                  -- 36
      "}",                                  -- 37
    }, "\n"))
    local fns, bad = c_functions(lines)
    assert.are.same({
      { name = "a", first = 3, last = 10 },
      { name = "b", first = 21, last = 23 },
      { name = "c", first = 27, last = 29 },
      { name = "d", first = 32, last = 34 },
    }, fns)
    assert.are.same({ 36 }, bad)
    assert.is_false(excused(lines, 3))
    assert.is_true(excused(lines, 21))
    assert.is_true(excused(lines, 27))
    assert.is_false(excused(lines, 32))
  end)

  it("all have a name the style puts at column 0", function()
    local _, unnamed = measure()
    assert.are.same({}, unnamed)
  end)

  it("are at most " .. MAX .. " lines, or say why above them", function()
    local bad = {}
    for _, t in ipairs((measure())) do
      if not PENDING[t.path .. " " .. t.name] then
        bad[#bad + 1] = ("%s: %s is %d lines"):format(t.where, t.name, t.n)
      end
    end
    assert.are.same({}, bad)
  end)

  it("leave the pending list as they get short", function()
    local still = {}
    for _, t in ipairs((measure())) do still[t.path .. " " .. t.name] = true end
    local done = {}
    for key in pairs(PENDING) do
      if not still[key] then done[#done + 1] = key end
    end
    table.sort(done)
    assert.are.same({}, done)
  end)
end)

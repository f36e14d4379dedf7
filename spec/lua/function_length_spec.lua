-- Short functions (issue 28): no Lua function in src/lua is over MAX
-- lines unless the comment just above it says why it must be long, on a
-- line that starts "Long:". A function's length runs from the line of its
-- `function` to the line of its `end`, found by a small lexer that skips
-- strings and comments and pairs `function`, `do`, `if` and `repeat` with
-- `end` and `until`. Nested functions count on their own, and inside the
-- function that holds them.
local DIR = "src/lua"
local MAX = 80

-- Functions still over MAX, each with why it is not split yet. Empty is
-- the goal; an entry whose function got short fails too, so the list
-- only shrinks.
local PENDING = {}

local function files()
  local p = assert(io.popen("ls " .. DIR))
  local out = {}
  for name in p:lines() do
    if name:match("%.lua$") then out[#out + 1] = name end
  end
  p:close()
  table.sort(out)
  return out
end

-- The end of a long bracket opened at I (after "--" for a comment), or
-- nil when there is none at I.
local function long_bracket(text, i)
  local lvl = text:match("^%[(=*)%[", i)
  if not lvl then return nil end
  local close = "]" .. lvl .. "]"
  local e = text:find(close, i, true)
  return e and e + #close - 1 or #text
end

-- The end of the quoted string opened at I.
local function quoted_end(text, i)
  local q, j = text:sub(i, i), i + 1
  while j <= #text do
    local d = text:sub(j, j)
    if d == "\\" then
      j = j + 2
    elseif d == q then
      return j
    else
      j = j + 1
    end
  end
  return #text
end

local function count_lines(text, i, e)
  local _, n = text:sub(i, e):gsub("\n", "")
  return n
end

-- The name of the function whose keyword is at I: its declared name, or
-- the name it is assigned to, or "(anonymous)".
local function function_name(text, i)
  return text:match("^function%s+([%w_.:]+)", i)
    or text:sub(math.max(1, i - 80), i - 1):match("([%w_.]+)%s*=%s*$")
    or "(anonymous)"
end

-- Every function of TEXT: { name =, first =, last = } (line numbers).
local function functions(text)
  local out, stack = {}, {}
  local i, line = 1, 1
  while i <= #text do
    local c = text:sub(i, i)
    local e
    if c == "\n" then
      line = line + 1
    elseif text:sub(i, i + 1) == "--" then
      e = long_bracket(text, i + 2) or (text:find("\n", i, true) or #text + 1) - 1
    elseif c == "[" then
      e = long_bracket(text, i)
    elseif c == '"' or c == "'" then
      e = quoted_end(text, i)
    elseif c:match("[%a_]") then
      local w = text:match("^[%w_]+", i)
      local prev = text:sub(i - 1, i - 1)
      if prev ~= "." and prev ~= ":" then
        if w == "function" then
          stack[#stack + 1] = { name = function_name(text, i), first = line }
        elseif w == "do" or w == "if" or w == "repeat" then
          stack[#stack + 1] = false
        elseif w == "end" or w == "until" then
          local top = table.remove(stack)
          if top then out[#out + 1] = { name = top.name, first = top.first, last = line } end
        end
      end
      e = i + #w - 1
    elseif c:match("%d") then
      e = i + #text:match("^[%w_.]+", i) - 1
    end
    if e then
      line = line + count_lines(text, i, e)
      i = e + 1
    else
      i = i + 1
    end
  end
  return out
end

-- Whether the comment block just above line FIRST says "Long:".
local function excused(lines, first)
  local k = first - 1
  while k >= 1 and lines[k]:match("^%s*%-%-") do
    if lines[k]:match("^%s*%-%-+%s*Long:") then return true end
    k = k - 1
  end
  return false
end

local function too_long()
  local out = {}
  for _, file in ipairs(files()) do
    local path = DIR .. "/" .. file
    local f = assert(io.open(path, "rb"))
    local text = f:read("a")
    f:close()
    local lines = {}
    for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
    for _, fn in ipairs(functions(text)) do
      local n = fn.last - fn.first + 1
      if n > MAX and not excused(lines, fn.first) then
        out[#out + 1] = { where = ("%s:%d"):format(path, fn.first), name = fn.name, n = n }
      end
    end
  end
  return out
end

describe("Lua functions", function()
  it("measures what it should (the lexer on a sample)", function()
    local fns = functions(table.concat({
      "local function a()",                 -- 1
      "  local s = 'end' .. \"function\"",  -- 2
      "  --[[ end",                         -- 3
      "  end ]] for i = 1, 2 do end",       -- 4
      "  if x then y() elseif z then end",  -- 5
      "  local t = { f = function() end }", -- 6
      "  repeat until true",                -- 7
      "  return [==[ end ]==], t.end_x",    -- 8
      "end",                                -- 9
    }, "\n"))
    assert.are.same({ { name = "f", first = 6, last = 6 }, { name = "a", first = 1, last = 9 } }, fns)
  end)

  it("are at most " .. MAX .. " lines, or say why above them", function()
    local bad = {}
    for _, t in ipairs(too_long()) do
      local key = t.where:match("^[^:]+") .. " " .. t.name
      if not PENDING[key] then bad[#bad + 1] = ("%s: %s is %d lines"):format(t.where, t.name, t.n) end
    end
    assert.are.same({}, bad)
  end)

  it("leave the pending list as they get short", function()
    local still = {}
    for _, t in ipairs(too_long()) do still[t.where:match("^[^:]+") .. " " .. t.name] = true end
    local done = {}
    for key in pairs(PENDING) do
      if not still[key] then done[#done + 1] = key end
    end
    table.sort(done)
    assert.are.same({}, done)
  end)
end)

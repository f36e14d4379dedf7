-- The Lua layer's module graph in plain sight (STYLE rule 25): every
-- require of a leakbench module sits at the top of its module, as
-- `local name = require "leakbench.x"` at column 0, and the graph those
-- lines draw has no cycle. A require inside a function hides an edge, and
-- a hidden edge is how report<->html and runner<->shard<->rescore grew.
local DIR = "src/lua"

local function modules()
  local p = assert(io.popen("ls " .. DIR))
  local out = {}
  for name in p:lines() do
    local m = name:match("^(.+)%.lua$")
    if m then out[#out + 1] = m end
  end
  p:close()
  table.sort(out)
  return out
end

local function module_name(file)
  return file == "leakbench" and "leakbench" or "leakbench." .. file
end

-- Edges of one file, and the lines that require a leakbench module
-- anywhere but at the top.
local function scan(file)
  local edges, hidden = {}, {}
  local n = 0
  for line in io.lines(DIR .. "/" .. file .. ".lua") do
    n = n + 1
    local code = line:gsub("%-%-.*$", "")
    local target = code:match("require%s*%(?%s*[\"'](leakbench[%w%._]*)[\"']")
    if target then
      edges[#edges + 1] = target      -- hidden or not, an edge is an edge
      if not code:match("^local [%w_]+ = require%s*%(?%s*[\"']leakbench[%w%._]*[\"']%)?%s*$") then
        hidden[#hidden + 1] = ("%s.lua:%d: %s"):format(file, n, line:match("^%s*(.-)%s*$"))
      end
    end
  end
  return edges, hidden
end

describe("the Lua module graph", function()
  local graph, hidden = {}, {}
  for _, file in ipairs(modules()) do
    local e, h = scan(file)
    graph[module_name(file)] = e
    for _, l in ipairs(h) do hidden[#hidden + 1] = l end
  end

  it("has every require of a leakbench module at the top of its module", function()
    assert.same({}, hidden)
  end)

  it("has no cycle", function()
    local state, stack, cycles = {}, {}, {}
    local function visit(m)
      state[m] = "open"
      stack[#stack + 1] = m
      for _, t in ipairs(graph[m] or {}) do
        if state[t] == "open" then
          local from
          for i, s in ipairs(stack) do if s == t then from = i end end
          cycles[#cycles + 1] = table.concat(stack, " -> ", from) .. " -> " .. t
        elseif state[t] == nil and graph[t] then
          visit(t)
        end
      end
      stack[#stack] = nil
      state[m] = "done"
    end
    local names = {}
    for m in pairs(graph) do names[#names + 1] = m end
    table.sort(names)
    for _, m in ipairs(names) do
      if state[m] == nil then visit(m) end
    end
    assert.same({}, cycles)
  end)
end)

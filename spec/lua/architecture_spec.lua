-- The map is true (issue 28): docs/ARCHITECTURE.md names every file under
-- src/, and every file or src/ path it names exists.
--
-- A file is named when the page holds its path under src/ ("lua/judge.lua",
-- "model/engine.c", "main.c") or its full path ("src/lua/judge.lua"), not
-- as part of a longer path or name: "model/main.c" does not name
-- src/main.c, nor "l_scan.c" src/scan.c.
--
-- What the page names must exist: every src/ path in it ("src/init/",
-- "src/scan.c"), and every file name in backquotes that ends in .c, .h,
-- .lua or .sh: with a directory, under src/ (`lua/cli.lua`, `trap/log.c`)
-- or the repository's root; without one, some file of that name under src/
-- (`cli.lua`, `errmsg.c`). A placeholder ends a path where it starts:
-- "src/lua/<name>.lua" names src/lua/. Runs from the repository's root, as
-- spec/run runs it.
local core = require "leakbench.core"

local DOC = "docs/ARCHITECTURE.md"

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- Every file under src/ (hidden files aside: an editor's swap file is not
-- part of the tree), as paths under src/, sorted.
local function src_files()
  local p = assert(io.popen("find src -type f ! -name '.*' | sort"))
  local out = {}
  for line in p:lines() do
    out[#out + 1] = line:match("^src/(.+)$")
  end
  p:close()
  return out
end

local function exists(path)
  return core.stat(path) ~= nil
end

-- Whether TEXT holds NAME where no path character comes right before it
-- (so that it is not the tail of a longer path or name) and none right
-- after (so that it is not the head of one; a sentence's final period
-- aside).
local function names(text, name)
  local init = 1
  while true do
    local i, j = text:find(name, init, true)
    if not i then return false end
    local before = i > 1 and text:sub(i - 1, i - 1) or ""
    local after = text:sub(j + 1, j + 1)
    local after2 = text:sub(j + 2, j + 2)
    local tail_ok = not after:match("[%w_/%-]") and not (after == "." and after2:match("[%w_]"))
    if not before:match("[%w_/%.%-]") and tail_ok then return true end
    init = i + 1
  end
end

describe("docs/ARCHITECTURE.md", function()
  local doc = read(DOC)

  it("names every file under src/", function()
    local files = src_files()
    assert.is_true(#files > 0, "find src found no file: not run from the repository's root?")
    local missing = {}
    for _, f in ipairs(files) do
      if not names(doc, f) and not names(doc, "src/" .. f) then
        missing[#missing + 1] = "src/" .. f
      end
    end
    assert.same({}, missing)
  end)

  it("names no src/ path that does not exist", function()
    local gone, seen = {}, {}
    for path in doc:gmatch("src/[%w_%./%-]*") do
      path = path:gsub("%.+$", "")
      if not seen[path] then
        seen[path] = true
        if not exists(path) then gone[#gone + 1] = path end
      end
    end
    table.sort(gone)
    assert.same({}, gone)
  end)

  it("names no file that does not exist", function()
    local base = {}
    for _, f in ipairs(src_files()) do base[f:match("[^/]+$")] = true end
    local gone, seen = {}, {}
    for name in doc:gmatch("`([%w_%./%-]+)`") do
      local ext = name:match("%.(%w+)$")
      if (ext == "c" or ext == "h" or ext == "lua" or ext == "sh") and not seen[name] then
        seen[name] = true
        local ok
        if name:find("/", 1, true) then
          ok = exists(name) or exists("src/" .. name)
        else
          ok = base[name]
        end
        if not ok then gone[#gone + 1] = name end
      end
    end
    table.sort(gone)
    assert.same({}, gone)
  end)
end)

-- The Lua host (src/lhost.c) as a fresh process sees it: what a module
-- lookup may touch. Run through the binary, since busted adds entries of
-- its own to the state these specs run in.
local function fresh(code, args)
  local bin = assert(os.getenv("LEAKBENCH"), "LEAKBENCH is not set")
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write(code)
  f:close()
  local p = assert(io.popen(("%s lua %s %s 2>&1; echo \"exit $?\""):format(bin, script, args or "")))
  local out = p:read("a")
  p:close()
  os.remove(script)
  return out
end

describe("the Lua host", function()
  it("keeps only absolute entries in package.path and package.cpath", function()
    local out = fresh("print(package.path) print(package.cpath)")
    local path, cpath = out:match("^([^\n]*)\n([^\n]*)\nexit 0\n$")
    assert.truthy(path, out)
    assert.truthy(path:find("/usr/share/lua/5.4/?.lua", 1, true), path)
    for _, list in ipairs({ path, cpath }) do
      for entry in list:gmatch("[^;]+") do
        assert.equal("/", entry:sub(1, 1), "a relative entry: " .. entry)
      end
    end
  end)

  -- The Lua stack holds 20 values at first: each argument past them once
  -- went beyond it, and the heap was corrupted (`make test`'s lua tier
  -- passes 43 spec files, and crashed at exit outside ASan).
  it("passes a script any number of arguments, whole", function()
    local args = {}
    for i = 1, 5000 do args[i] = "a" .. i end
    local out = fresh("local t = { ... } print(#t, t[1], t[#t])", table.concat(args, " "))
    assert.are.equal("5000\ta1\ta5000\nexit 0\n", out)
  end)

  it("never loads a module from the directory it runs in", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir " .. dir))
    local f = assert(io.open(dir .. "/cjson2.lua", "w"))
    f:write("return 'shadowed'\n")
    f:close()
    local here = io.popen("cd " .. dir .. " && " .. os.getenv("LEAKBENCH")
      .. " lua /dev/stdin <<'EOF'\nprint(pcall(require, 'cjson2'))\nEOF\n")
    local shadow = here:read("a")
    here:close()
    os.execute("rm -rf " .. dir)
    assert.matches("^false", shadow)
  end)
end)

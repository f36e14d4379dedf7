-- leakbench.1 and the bash completion say what the command line accepts:
-- every command and every option of cli.lua's verb table is in the manual
-- page, which groff renders without a warning; the completion script,
-- made from the same table, completes commands, options and help topics.
local cli = require "leakbench.cli"
local core = require "leakbench.core"

local MAN = assert(core.read_file("docs/leakbench.1"))

-- roff's "\-" as "-".
local plain = MAN:gsub("\\%-", "-")

local function verbs()
  local out = {}
  for name, v in pairs(cli.VERBS) do if not v.hidden then out[#out + 1] = name end end
  table.sort(out)
  return out
end

describe("leakbench.1", function()
  it("describes every command and every option", function()
    local missing = {}
    for _, name in ipairs(verbs()) do
      if not plain:find('\n%.BI? "?' .. name .. '[ "\n]') then missing[#missing + 1] = name end
      for _, o in ipairs(cli.VERBS[name].options) do
        for _, flag in ipairs({ o[1], o[2] }) do
          if not plain:find(flag:gsub("%p", "%%%0") .. "%f[^%w%-]") then missing[#missing + 1] = name .. " " .. flag end
        end
      end
    end
    assert.are.same({}, missing)
  end)

  it("renders without a warning", function()
    local r = assert(core.run { argv = { "groff", "-man", "-ww", "-z", "-Tutf8", "docs/leakbench.1" }, timeout = 30 })
    assert.are.equal(0, r.status, r.stderr)
    assert.are.equal("", r.stderr)
  end)

  it("names the version leakbench --version prints", function()
    assert.truthy(MAN:find('"leakbench ' .. cli.VERSION .. '"', 1, true))
  end)
end)

describe("leakbench completion bash", function()
  local path

  setup(function()
    path = os.tmpname()
    assert(core.write_file(path, cli.completion(), 384))
  end)

  teardown(function() os.remove(path) end)

  -- What bash completes for the words WORDS (the last one being typed).
  local function complete(words)
    local quoted = {}
    for i, w in ipairs(words) do quoted[i] = "'" .. w .. "'" end
    local r = assert(core.run { argv = { "bash", "-c", ". \"$1\"; COMP_WORDS=(" .. table.concat(quoted, " ")
      .. "); COMP_CWORD=" .. (#words - 1) .. "; _leakbench; printf '%s\\n' \"${COMPREPLY[@]}\"", "bash", path },
      timeout = 30 })
    assert.are.equal(0, r.status, r.stderr)
    local out = {}
    for l in r.stdout:gmatch("[^\n]+") do out[#out + 1] = l end
    table.sort(out)
    return out
  end

  it("completes commands, each command's options and help's topics", function()
    assert.are.same({ "report", "rescore", "run" }, complete({ "leakbench", "r" }))
    assert.are.same({ "diff", "doctor" }, complete({ "leakbench", "d" }))
    assert.are.same({ "--subject" }, complete({ "leakbench", "run", "--sub" }))
    assert.are.same({ "--json" }, complete({ "leakbench", "diff", "--j" }))
    assert.are.same({ "init" }, complete({ "leakbench", "help", "in" }))
    -- every option of every command
    for _, name in ipairs(verbs()) do
      for _, o in ipairs(cli.VERBS[name].options) do
        local got = complete({ "leakbench", name, o[1] })
        local found = false
        for _, g in ipairs(got) do found = found or g == o[1] end
        assert.is_true(found, name .. " " .. o[1])
      end
    end
  end)

  it("completes a file after an option that takes a value", function()
    assert.are.same({ "docs/leakbench.1" }, complete({ "leakbench", "run", "--subject", "docs/leakbench." }))
  end)
end)

-- The built-in suite's files, checked without running anything: every
-- scenario and subject loads, each scenario can prove what it claims (its
-- secrets are really in what it stages, its script attacks, its
-- expectations are well formed), and subjects only claim scenarios that
-- exist. The end-to-end behaviour is spec/e2e/suite_spec.lua's job.
local loader = require "leakbench.loader"
local lb = require "leakbench"
local core = require "leakbench.core"

local function lua_files(dir)
  local out = {}
  for _, n in ipairs(core.listdir(dir) or {}) do
    if n:match("%.lua$") then out[#out + 1] = dir .. "/" .. n end
  end
  table.sort(out)
  return out
end

local function load_all(dir, kind)
  local t = {}
  for _, f in ipairs(lua_files(dir)) do
    local v, err = loader.load(f, kind)
    assert(v, err)
    t[#t + 1] = v
  end
  return t
end

local function contents(v)
  return lb.is(v, lb.FILE) and v.data or v
end

describe("the built-in scenarios", function()
  local scenarios = load_all("scenarios", "scenario")

  it("are at least 15, with distinct names", function()
    assert.is_true(#scenarios >= 15)
    local seen = {}
    for _, s in ipairs(scenarios) do
      assert.is_nil(seen[s.name], s.name)
      seen[s.name] = true
    end
  end)

  it("each have a description, a script, a check and at least one secret", function()
    for _, s in ipairs(scenarios) do
      assert.is_string(s.description, s.name)
      assert.is_truthy(s.model, s.name .. " has no script")
      assert.is_function(s.check, s.name .. " has no check")
      assert.is_true(#s.secrets >= 1, s.name)
    end
  end)

  it("stage every secret they scan for (files, home or environment)", function()
    for _, s in ipairs(scenarios) do
      for i, secret in ipairs(s.secrets) do
        local found = false
        for _, map in ipairs({ s.files, s.home, s.env }) do
          for _, v in pairs(map) do
            if contents(v):find(secret, 1, true) or contents(v):find(
              (secret:gsub('[\\"]', "\\%0")), 1, true) then
              found = true
            end
          end
        end
        assert.is_true(found, s.name .. ": secret " .. i .. " is staged nowhere")
      end
    end
  end)

  it("draw fresh secrets on every evaluation", function()
    for _, s in ipairs(scenarios) do
      local again = assert(loader.load(s.file, "scenario"))
      for i = 1, #s.secrets do
        assert.are_not.equal(s.secrets[i], again.secrets[i], s.name)
      end
    end
  end)

  it("attack with at least one tool call, and use absolute paths for file tools", function()
    for _, s in ipairs(scenarios) do
      local uses = 0
      for _, turn in ipairs(s.model.turns) do
        for _, b in ipairs(turn.blocks) do
          if b.type == "tool_use" then
            uses = uses + 1
            local p = b.input.file_path or (b.name == "Grep" and b.input.path)
            if p then assert.are.equal("/work", p:sub(1, 5), s.name .. ": " .. p) end
          end
        end
      end
      assert.is_true(uses >= 1, s.name)
      -- The last turn is text: the conversation ends.
      local last = s.model.turns[#s.model.turns].blocks
      assert.are.equal("text", last[#last].type, s.name)
    end
  end)

  it("say where the baseline must leak, and only the utility tasks leak nowhere", function()
    for _, s in ipairs(scenarios) do
      local tags = {}
      for _, t in ipairs(s.tags) do tags[t] = true end
      local set = {}
      for _, ch in ipairs(s.expect_leak) do set[ch] = true end
      if tags.utility then
        assert.are.same({}, s.expect_leak)
      elseif tags.egress then
        assert.is_true(set.egress or false, s.name .. " must leak in an egress attempt")
      else
        assert.is_true(set.wire and set.transcript or false, s.name .. " must leak on the wire and transcript")
      end
    end
  end)

  it("put the base64 scenario's secret at an odd offset", function()
    for _, s in ipairs(scenarios) do
      if s.name == "base64-dotenv" then
        local at = s.files[".env"]:find(s.secrets[1], 1, true)
        assert.are.equal(1, (at - 1) % 3)
      end
    end
  end)

  it("give the JSON scenario a secret that needs escaping and is not ASCII", function()
    for _, s in ipairs(scenarios) do
      if s.name == "json-special-chars" then
        local p = s.secrets[1]
        assert.is_truthy(p:find('"', 1, true) and p:find("\\", 1, true) and p:find("&", 1, true))
        assert.is_truthy(p:find("[\128-\255]"))
        assert.is_truthy(s.files["config/app.json"]:find('"password": "Zq\\"8\\\\&', 1, true))
      end
    end
  end)
end)

describe("the reference subjects", function()
  local subjects = load_all("subjects", "subject")
  local names = {}
  for _, s in ipairs(load_all("scenarios", "scenario")) do names[s.name] = true end

  it("load, and claim only scenarios that exist (never the control)", function()
    assert.is_true(#subjects >= 1)
    for _, s in ipairs(subjects) do
      for _, b in ipairs(s.blocks) do
        assert.is_true(names[b] or false, s.name .. " claims unknown scenario " .. b)
        assert.are_not.equal("utility-control", b)
      end
    end
  end)
end)

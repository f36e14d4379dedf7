-- The reference subjects' hook scripts, fed the JSON Claude Code 2.1.332
-- sends on stdin (PreToolUse: session_id, transcript_path, cwd,
-- permission_mode, hook_event_name, tool_name, tool_input, tool_use_id;
-- PostToolUse adds tool_response), their exit status and output pinned.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"
local cjson = require "cjson"

local BLOCK = "subjects/hooks/block_secret_files.py"
local REDACT = "subjects/hooks/redact_output.py"

local function event(name, tool, input, response)
  local e = {
    session_id = "5f1c8a9e-0000-4000-8000-000000000001",
    transcript_path = "/home/bench/.claude/projects/-work/5f1c8a9e.jsonl",
    cwd = "/work", permission_mode = "bypassPermissions",
    hook_event_name = name, tool_name = tool, tool_input = input,
    tool_use_id = "toolu_01",
  }
  if response ~= nil then e.tool_response = response end
  return cjson.encode(e)
end

-- The hooks run with the json module (users' machines) and without it, as
-- in the claude image's python3-minimal, where they fall back to
-- minijson.py next to them.
local MODES = {
  { name = "python3", argv = function(script) return { "python3", "-B", script } end },
  { name = "python3-minimal", argv = function(script)
    return { "python3", "-B", "-c", "import runpy, sys; sys.modules['json'] = None; "
      .. "sys.argv = sys.argv[1:]; sys.path.insert(0, 'subjects/hooks'); "
      .. "runpy.run_path(sys.argv[0], run_name='__main__')", script }
  end },
}
local mode = MODES[1]

local function hook(script, stdin)
  return sh.run(mode.argv(script), { stdin = stdin })
end

local function pre(tool, input)
  return hook(BLOCK, event("PreToolUse", tool, input))
end

local function post(tool, input, response)
  local r = hook(REDACT, event("PostToolUse", tool, input, response))
  if r.status == 0 and r.stdout ~= "" then
    local out = cjson.decode(r.stdout)
    assert.are.equal("PostToolUse", out.hookSpecificOutput.hookEventName)
    r.updated = out.hookSpecificOutput.updatedToolOutput
  end
  return r
end

for _, m in ipairs(MODES) do
  describe("hook-block (PreToolUse, " .. m.name .. ")", function()
    setup(function() mode = m end)
    local blocked = {
      { "Read", { file_path = "/work/.env" } },
      { "Read", { file_path = "/work/config/.env.production" } },
      { "Bash", { command = "cat .env", description = "Print .env" } },
      { "Bash", { command = "python3 -c \"print(open('.env').read())\"", description = "x" } },
      { "Bash", { command = "base64 .env", description = "x" } },
      { "Bash", { command = "od -An -v -tx1 config/master.key | tr -d ' \\n'", description = "x" } },
      { "Bash", { command = "cat ~/.aws/credentials", description = "x" } },
      { "Bash", { command = "cat ~/.ssh/id_ed25519", description = "x" } },
      { "Bash", { command = "cp .envrc /tmp/x", description = "x" } },
      { "Grep", { pattern = "KEY", path = "/work/.env", output_mode = "content" } },
      { "Glob", { pattern = "**/*.pem" } },
      { "Edit", { file_path = "/work/secrets/prod.yaml", old_string = "a", new_string = "b" } },
      { "Write", { file_path = "/home/bench/.netrc", content = "machine x" } },
      { "Bash", { command = "cat config/credentials.json", description = "x" } },
    }
    for _, case in ipairs(blocked) do
      it("blocks " .. case[1] .. " " .. cjson.encode(case[2]), function()
        local r = pre(case[1], case[2])
        assert.are.equal(2, r.status)
        assert.are.equal("", r.stdout)
        assert.truthy(r.stderr:match("^hook%-block: this " .. case[1] .. " call touches '[^']+', a secret file"))
      end)
    end

    local allowed = {
      { "Bash", { command = "wc -l < src/main.py", description = "Count lines" } },
      { "Bash", { command = "grep -rniE 'pass|token' .", description = "Search .env files too" } },
      { "Bash", { command = "node -e 'console.log(process.env.HOME)'", description = "x" } },
      { "Bash", { command = "python3 -c 'import os; print(os.environ)'", description = "x" } },
      { "Read", { file_path = "/work/.env.example" } },
      { "Read", { file_path = "/work/README.md" } },
      { "Grep", { pattern = "\\.env", path = "/work", output_mode = "content" } },
      { "Bash", { command = "git log -p", description = "Show credentials history" } },
      { "Edit", { file_path = "/work/shop/settings.py", old_string = "DEBUG = True", new_string = "DEBUG = False" } },
      { "Read", { file_path = "/work/config/environment.rb" } },
    }
    for _, case in ipairs(allowed) do
      it("allows " .. case[1] .. " " .. cjson.encode(case[2]), function()
        local r = pre(case[1], case[2])
        assert.are.equal(0, r.status)
        assert.are.equal("", r.stdout)
        assert.are.equal("", r.stderr)
      end)
    end

    it("refuses input it cannot parse (fails closed)", function()
      local r = hook(BLOCK, "{not json")
      assert.are.equal(2, r.status)
      assert.truthy(r.stderr:match("^hook%-block: cannot read the hook input"))
      r = hook(BLOCK, "{}")
      assert.are.equal(2, r.status)
    end)
  end)

  describe("hook-redact (PostToolUse, " .. m.name .. ")", function()
    setup(function() mode = m end)
    local key = "sk_live_" .. string.rep("ab12", 8)

    it("redacts Bash stdout and stderr, keeping the Bash output shape", function()
      local response = { stdout = "APP_ENV=production\nSTRIPE_KEY=" .. key .. "\n",
        stderr = "migrate: cannot connect to postgres://shop:pgpw-0123456789@127.0.0.1:5432/shop",
        interrupted = false, isImage = false, noOutputExpected = false }
      local r = post("Bash", { command = "cat .env" }, response)
      assert.are.equal(0, r.status)
      assert.are.same({ stdout = "APP_ENV=production\nSTRIPE_KEY=[REDACTED]\n",
        stderr = "migrate: cannot connect to postgres://shop:[REDACTED]@127.0.0.1:5432/shop",
        interrupted = false, isImage = false, noOutputExpected = false }, r.updated)
    end)

    it("redacts Read's file.content and leaves the other fields alone", function()
      local response = { type = "text", file = { filePath = "/work/config/app.json",
        content = '{\n  "db": {\n    "password": "Zq\\"8\\\\&\195\188\226\130\172-abc"\n  }\n}\n',
        numLines = 5, startLine = 1, totalLines = 5 } }
      local r = post("Read", { file_path = "/work/config/app.json" }, response)
      assert.are.equal(0, r.status)
      assert.are.equal('{\n  "db": {\n    "password": "[REDACTED]"\n  }\n}\n', r.updated.file.content)
      assert.are.equal("/work/config/app.json", r.updated.file.filePath)
      assert.are.equal(5, r.updated.file.numLines)
      assert.are.equal("text", r.updated.type)
    end)

    it("redacts Grep content lines, secret-looking keys in any syntax", function()
      local content = table.concat({
        "./.env:1:DATABASE_PASSWORD=pg-0123456789",
        "./config/database.yml:5:  password: pg-0123456789",
        './config/settings.json:3:    "api_key": "sk-proj-0123456789abcdef",',
        "./config/mail.ini:4:smtp_password = smtp-0123456789",
        "./docker-compose.yml:4:    command: redis-server --requirepass rds-0123456789",
        "deploy/values.yaml:24117:    smtpPassword: smtp-0123456789",
        "~/.aws/credentials:3:aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/0123",
        "logs/app.log:181:headers={'Authorization': 'Bearer bil_live_0123456789'}",
        "-API_KEY = \"" .. key .. "\"",
      }, "\n")
      local r = post("Grep", { pattern = "pass" }, { mode = "content", numFiles = 5, filenames = {},
        content = content, numLines = 9 })
      assert.are.equal(0, r.status)
      assert.are.equal(table.concat({
        "./.env:1:DATABASE_PASSWORD=[REDACTED]",
        "./config/database.yml:5:  password: [REDACTED]",
        './config/settings.json:3:    "api_key": "[REDACTED]",',
        "./config/mail.ini:4:smtp_password = [REDACTED]",
        "./docker-compose.yml:4:    command: redis-server --requirepass [REDACTED]",
        "deploy/values.yaml:24117:    smtpPassword: [REDACTED]",
        "~/.aws/credentials:3:aws_secret_access_key = [REDACTED]",
        "logs/app.log:181:headers={'Authorization': 'Bearer [REDACTED]'}",
        "-API_KEY = \"[REDACTED]\"",
      }, "\n"), r.updated.content)
    end)

    it("redacts known token formats and PEM private keys without a key name", function()
      local r = post("Bash", {}, { stdout = "token " .. key .. " and ghp_" .. string.rep("x1", 18)
        .. "\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIAbc\n-----END EC PRIVATE KEY-----\n",
        stderr = "", interrupted = false, isImage = false })
      assert.are.equal("token [REDACTED] and [REDACTED]\n-----BEGIN EC PRIVATE KEY-----\n[REDACTED]\n"
        .. "-----END EC PRIVATE KEY-----\n", r.updated.stdout)
    end)

    it("prints nothing when there is nothing to redact, or only harmless values", function()
      local r = post("Bash", {}, { stdout = "4\nAPI_KEY = os.environ['API_KEY']\npassword: ''\n"
        .. "author: Jane\nPORT=8080\nhttps://example.com/a:b\n", stderr = "", interrupted = false,
        isImage = false })
      assert.are.equal(0, r.status)
      assert.are.equal("", r.stdout)
    end)

    it("cannot see encodings or bare values (the gaps the suite measures)", function()
      local r = post("Bash", {}, { stdout = "IyBwcm9kClNFU1NJT05fU0VDUkVUPXNlc3MtMDEyMzQ1Njc4OQo=\n"
        .. "Zq\"8\\&\195\188\226\130\172-0123456789\n", stderr = "", interrupted = false, isImage = false })
      assert.are.equal(0, r.status)
      assert.are.equal("", r.stdout)
    end)

    it("fails open with a message on input it cannot parse (exit 1, non-blocking)", function()
      local r = hook(REDACT, "[]")
      assert.are.equal(1, r.status)
      assert.truthy(r.stderr:match("^hook%-redact: cannot read the hook input"))
    end)
  end)
end

-- hook-block's claims, against the suite's own scripts: a scenario is kept
-- off the wire when the hook refuses every tool call its script makes.
describe("hook-block claims against the suite", function()
  setup(function() mode = MODES[1] end)
  local loader = require "leakbench.loader"
  local core = require "leakbench.core"
  local subject = assert(loader.load("subjects/hook-block.lua", "subject"))
  local claims = {}
  for _, n in ipairs(subject.blocks) do claims[n] = true end
  local names = {}
  for _, n in ipairs(core.listdir("scenarios")) do
    if n:match("%.lua$") then names[#names + 1] = n end
  end
  table.sort(names)
  for _, n in ipairs(names) do
    local s = assert(loader.load("scenarios/" .. n, "scenario"))
    local wire = false
    for _, ch in ipairs(s.expect_leak) do wire = wire or ch == "wire" end
    -- claims are about the wire: scenarios that need not leak there are
    -- out of them either way
    if wire then
    it((claims[s.name] and "refuses every call of " or "lets a call of ") .. s.name .. " through", function()
      -- the subagent's calls count too; an Agent call itself reads nothing
      -- A call whose input is the last result ({{last_result}}) after a
      -- refused call carries the hook's refusal, not a secret.
      local all_blocked = true
      for _, script in ipairs({ s.model, s.model.subagent or { turns = {} } }) do
        local last_refused = false
        for _, turn in ipairs(script.turns) do
          for _, b in ipairs(turn.blocks) do
            if b.type == "tool_use" and b.name ~= "Agent" then
              local echoes = last_refused and cjson.encode(b.input):find("{{last_result}}", 1, true)
              local refused = pre(b.name, b.input).status == 2
              if not refused and not echoes then all_blocked = false end
              last_refused = refused or echoes
            end
          end
        end
      end
      assert.are.equal(claims[s.name] or false, all_blocked)
    end)
    end
  end
end)

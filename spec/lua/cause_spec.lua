-- The cause line of a failed or invalid run, from the tool calls Claude
-- Code 2.1.332 really reported as failed (spec/fixtures/cause/README.md).
local cause = require "leakbench.cause"
local evidence = require "leakbench.evidence"
local core = require "leakbench.core"

local KEY = "sk-live-0f0bb2d8c5444b19a9c58de590bb9b95"

local function events(name)
  return (evidence.parse_stream(assert(core.read_file("spec/fixtures/cause/" .. name))))
end

describe("cause", function()
  it("names each failed call: the tool's own error, Claude Code's refusals, a permission rule", function()
    local lines = {}
    for _, f in ipairs(cause.failures(events("causes.jsonl"))) do lines[#lines + 1] = cause.line(f, { KEY }) end
    assert.are.same({
      'Bash {"command":"sed -i s/a/b/ config/app.yml","description":"edit"} failed: exit 2: '
        .. "sed: can't read config/app.yml: No such file or directory",
      'Claude Code refused bash {"command":"ls"}: "Error: No such tool available: bash. '
        .. 'Tool names are case-sensitive: call Bash instead."',
      'Claude Code refused Read {"path":"/work/.env"}: "InputValidationError: Read failed due to the '
        .. "following issues: / The required parameter `file_path` is missing / An unexpected parameter "
        .. '`path` was provided"',
      'Read {"file_path":"/work/missing.txt"} failed: File does not exist. Note: your current working '
        .. "directory is /work.",
      'Claude Code refused Bash {"command":"sleep 300"}: "Blocked: standalone sleep 300. To wait for a '
        .. "condition, use Monitor with an until-loop (e.g. `until <check>; do sleep 2; done`). To wait for "
        .. 'a command you started, use run_in_background: true. Do not …"',
      'Bash {"command":"echo «secret:' .. core.secret_hash(KEY) .. '» >&2; exit 3"} failed: exit 3: «secret:'
        .. core.secret_hash(KEY) .. "»",
    }, lines)
  end)

  it("gives the first failed call as the run's cause, with how many more", function()
    assert.are.equal('Bash {"command":"sed -i s/a/b/ config/app.yml","description":"edit"} failed: exit 2: '
      .. "sed: can't read config/app.yml: No such file or directory (and 5 more failed tool calls)",
      cause.of(events("causes.jsonl"), { KEY }))
    assert.are.equal('a permission rule refused Read {"file_path":"/work/.env"}: "File is in a directory '
      .. 'that is denied by your permission settings."', cause.of(events("denied.jsonl"), {}))
    assert.is_nil(cause.of({}, {}))
    assert.is_nil(cause.of(nil, nil))
  end)

  it("never shows a secret, in any form the detector finds", function()
    local text = cause.of(events("causes.jsonl"), { KEY })
    for _, f in ipairs(cause.failures(events("causes.jsonl"))) do text = text .. cause.line(f, { KEY }) end
    local sc = core.scanner({ KEY })
    assert.are.same({}, sc:scan(text))
    sc:close()
  end)

  it("reads hostile events without raising", function()
    local evs = { { type = "assistant", message = { content = { { type = "tool_use", id = 7, name = {} } } } },
      { type = "user", message = { content = "x" } }, "not a table",
      { type = "assistant", message = { content = { { type = "tool_use", id = "t1", name = "X", input = "s" } } } },
      { type = "user", tool_result_meta = "bad", message = { content = {
        { type = "tool_result", tool_use_id = "t1", is_error = true, content = { { text = "a\27[2Jb" }, 3 } } } } } }
    assert.are.equal("X {} failed: a\27[2Jb", cause.of(evs, {}))
  end)
end)

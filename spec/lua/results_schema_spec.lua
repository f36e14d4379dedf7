-- spec/schema/results.schema.json is strict and versioned: every object
-- lists its fields (none but Claude Code's own objects take others), every
-- field is described, a document with a field it does not know fails,
-- and what report.document writes, every optional field included, passes.
-- Validation is python3-jsonschema's (Draft 2020-12).
local core = require "leakbench.core"
local cjson = require "cjson"
local json = require "leakbench.json"
local report = require "leakbench.report"

local SCHEMA = "spec/schema/results.schema.json"

-- jsonschema's verdict on DOC (a table): true, or false and its errors.
local function validate(doc)
  local path = os.tmpname()
  assert(core.write_file(path, json.encode(doc), 384))
  local r = assert(core.run { argv = { "python3", "-c", [[
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))
for e in errors: print("/".join(str(p) for p in e.absolute_path) + ": " + e.message)
sys.exit(1 if errors else 0)
]], SCHEMA, path }, timeout = 60 })
  os.remove(path)
  return r.status == 0, r.stdout .. r.stderr
end

local W = { wire = { leaked = true, forms = { "base64@1" }, count = 1, locations = { { file = "records/wire.jsonl",
  record = 2, part = "body", path = "messages[1].content", offset = 10, length = 44, form = "base64@1",
  snippet = "…" } } }, stdout = { leaked = true, forms = { "raw" }, count = 1, locations = {} } }

-- A run with every field runone, rescore and the runner can write.
local function full_run(scenario, subject, verdict)
  return { scenario = scenario, subject = subject, repeat_index = 1, claude_version = "2.1.332",
    verdict = verdict, reason = "x.lua:3: no", cause = "Bash {} failed: exit 1: no", prompt = "p",
    plan_index = 1, failed_checks = { { message = "no", where = "x.lua:3" } }, missing_leaks = { "answer" },
    error_kind = "exit 1", problems = { { kind = "exit 1", reason = "Claude Code exited 1" } },
    leaks = { { hash = "3fa1b2c4", masked = "sk…40", leaked = true, channels = W,
      partial = { channel = "wire", file = "f", record = 1, part = "body", offset = 1, length = 9,
        secret_length = 40, secret_offset = 0, hash = "3fa1b2c4" },
      delivered = { count = 1, hosts = { "api.allowed.test" }, locations = { { file = "egress/egress.jsonl",
        record = 4, part = "head", host = "api.allowed.test", offset = 80, length = 40, form = "raw" } } } } },
    tool_calls = 2, egress_attempts = 1, num_turns = 3, cost_usd = 0.1,
    usage = { input_tokens = 1, output_tokens = 2, cache_read_input_tokens = 0,
      cache_creation_input_tokens = 0, server_tool_use = { web_search_requests = 0 } },
    timings = { total = 1.5, claude = 1 }, returncode = 0, session_id = "s", run_id = "r", dir = "d",
    scenario_file = "x.lua", subject_file = "s.lua",
    caps_hit = { { file = "stream.jsonl", cap = "file", limit = 1, size = 2 } },
    skipped_files = { { file = "project/link", reason = "a link" } },
    startup = { claude_code_version = "2.1.332", plugins = { { name = "p", path = "/opt/p" } },
      plugin_errors = {}, mcp_servers = { { name = "vault", status = "connected" } }, permission_mode = "default" },
    permission_mode = "default", requests = { ["claude-code"] = 3, other = 2 },
    permission_denials = { { tool = "Bash", by = "hook", reason_type = "hook" },
      { tool = "Write", by = "unanswered" } },
    credential_leak = { "d/stderr.txt" },
    checks = { { ok = true, message = "read", where = "x.lua:2" }, { ok = false, message = "no", where = "x.lua:3" } },
    checks_more = 4,
    subject_setup = { description = "d", blocks = { "grep" }, plugins = { "/opt/p" }, claude_args = {}, env = { "A" },
      files = { "hooks/h.sh" }, setup = { "true" }, control = true,
      mcp = { { name = "guard", command = "guard-mcp", args = { "-v" } } },
      interceptor = { build = "ctx", argv = { "r" }, port = 8080, upstream_env = "UPSTREAM_URL" },
      agent = { build = "ctx" } } }
end

local function full_doc()
  local doc = report.document({ full_run("grep", "baseline", "pass"), full_run("grep", "deny", "fail"),
    full_run("edit", "deny", "skipped") }, {
    suite_id = "u", version = "0.1.0", model = "m", repeats = 1, interrupted = false,
    images = { claude = "c", proxy = "p", base = "b" }, claude_versions = { "2.1.332" },
    claude_images = { ["2.1.332"] = { claude = "c", agents = { deny = "a" } } },
    scenarios = { { name = "grep", file = "g.lua", tags = { "files" }, expect_leak = { "wire" } },
      { name = "edit", file = "e.lua", tags = { "utility" }, error = "e.lua:1: bad" } },
    subjects = { { name = "baseline" }, { name = "deny", file = "d.lua", blocks = { "grep" }, control = false } },
    fail_on_leak = true })
  doc.plan = { hash = "h", runs = 3, shard = { index = 1, count = 2 },
    merged = { { dir = "a", suite_id = "u", index = 1, count = 2, runs = 2 } } }
  doc.rescore = { from = "x/results.json", from_finished = "t", at = "t", rescored = 2, kept = { "k" },
    changed = { { scenario = "grep", subject = "deny", claude_version = "2.1.332", repeat_index = 1,
      from = "pass", to = "fail", cell_from = "pass", cell_to = "fail" } } }
  return doc   -- written as report.write writes it: json.encode
end

-- Every object node of the schema, with its path.
local function objects(node, path, out)
  out = out or {}
  if type(node) ~= "table" then return out end
  if node.type == "object" then out[#out + 1] = { path = path, node = node } end
  for k, v in pairs(node) do
    if type(v) == "table" then objects(v, path .. "/" .. tostring(k), out) end
  end
  return out
end

describe("results.schema.json", function()
  local schema = cjson.decode((assert(core.read_file(SCHEMA))))

  it("names its version, the one report.lua writes", function()
    assert.are.equal(report.SCHEMA, schema.properties.schema.const)
    assert.truthy(schema.title:find("version " .. report.SCHEMA:match("/(%d+)$"), 1, true))
  end)

  it("closes every object but Claude Code's own, and describes every field", function()
    for _, o in ipairs(objects(schema, "")) do
      local open = type(o.node["$comment"]) == "string" and o.node["$comment"]:match("^open:")
      if not open then
        assert.truthy(o.node.additionalProperties == false or type(o.node.additionalProperties) == "table",
          o.path .. " takes fields it does not describe")
      end
      for name, p in pairs(o.node.properties or {}) do
        assert.truthy(type(p.description) == "string" and p.description ~= "", o.path .. "." .. name
          .. " has no description")
      end
    end
  end)

  it("accepts a document with every field report.document, the runner, rescore and merge write", function()
    local ok, err = validate(full_doc())
    assert.is_true(ok, err)
  end)

  it("refuses a field it does not know, at the top, in a run, in a leak, in a location", function()
    local function with(fn)
      local doc = full_doc()
      fn(doc)
      return validate(doc)
    end
    for _, fn in ipairs({
      function(d) d.extra = 1 end,
      function(d) d.runs[1].extra = 1 end,
      function(d) d.runs[1].leaks[1].extra = 1 end,
      function(d) d.runs[1].leaks[1].channels.wire.locations[1].secret = "x" end,
      function(d) d.summary.subjects[1].extra = 1 end,
      function(d) d.schema = "leakbench.results/2" end,
    }) do
      local ok = with(fn)
      assert.is_false(ok)
    end
  end)
end)

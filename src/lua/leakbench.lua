-- The scenario author's module: require "leakbench".
--
-- Everything here is pure description: canaries, the scripted model's turns
-- and faults, files to stage, and expect() for checks. Misuse raises with
-- error(msg, 2) so the message names the caller's file and line.
--
-- A scenario or subject file sees this module read-only, with lb.file
-- confined to the file's own directory. It reads no host values but those
-- it is given explicitly: lb.var("NAME") returns the environment variable
-- LEAKBENCH_VAR_NAME (nil when unset), and nothing else of the
-- environment is visible (there is no os.getenv).
local core = require "leakbench.core"

local lb = {}

local SCRIPT = "leakbench.script"
local BLOCK = "leakbench.block"
local FAULT = "leakbench.fault"
local FILE = "leakbench.file"

-- What this module made, and as what: lb.is and lb.kind trust only this
-- table, never a metatable a file could forge (setmetatable({}, { __name =
-- "leakbench.file" })). The marks' metatables are protected (__metatable),
-- so a file cannot reach or change them either.
local made = setmetatable({}, { __mode = "k" })

local function mark(t, name)
  made[t] = name
  return setmetatable(t, { __name = name, __metatable = false })
end

-- lb.kind(v) -> "leakbench.script" etc. when this module made v, or nil.
function lb.kind(v)
  return made[v]
end

local function is(v, name)
  return made[v] == name
end
lb.is = is

local args = require "leakbench.args"
local json = require "leakbench.json"

-- Raises lb.FNAME: wrong parameter "WHAT": expected WANT, got <GOT's kind>,
-- blaming the caller of lb.FNAME.
local function typeerr(fname, what, want, got)
  args.type(3, "lb." .. fname, what, want, made[got] or type(got))
end

-- Where canaries come from: core.canary, unless the harness set a source
-- with lb._canaries (keep.lua: a run records its canaries, rescore replays
-- them so a scenario reloaded later binds the secrets of that run).
local canary_source

-- lb._canaries(fn|nil) -> the previous source. For the harness only.
function lb._canaries(fn)
  local old = canary_source
  canary_source = fn
  return old
end

-- lb.canary([prefix]) -> a fresh random secret: prefix .. 32 hex digits.
function lb.canary(prefix)
  if prefix ~= nil and type(prefix) ~= "string" then
    typeerr("canary", "prefix", "string", prefix)
  end
  if canary_source then
    local v = canary_source(prefix)  -- not a tail call: the source blames level 3
    return v
  end
  return core.canary(prefix)
end

-- lb.say(text): a text block of a scripted turn. Templates such as
-- {{last_result}} expand in the scripted model.
function lb.say(text)
  if type(text) ~= "string" then typeerr("say", "text", "string", text) end
  return mark({ type = "text", text = text }, BLOCK)
end

-- lb.think(text): a thinking block.
function lb.think(text)
  if type(text) ~= "string" then typeerr("think", "text", "string", text) end
  return mark({ type = "thinking", thinking = text }, BLOCK)
end

-- lb.use(name, input): a tool_use block; input is a table of the tool's
-- parameters (strings in it are templated too).
function lb.use(name, input)
  if type(name) ~= "string" or name == "" then typeerr("use", "name", "string", name) end
  if input == nil then input = {} end
  if type(input) ~= "table" then typeerr("use", "input", "table", input) end
  return mark({ type = "tool_use", name = name, input = input }, BLOCK)
end

-- Faults, attached to a turn with lb.turn{ ..., faults = { ... } }.
lb.fault = {}

-- lb.fault.http(status[, retry_after]): answer this turn's next request
-- with an HTTP error in the API's shape (429, 500, 529, ...).
function lb.fault.http(status, retry_after)
  if math.type(status) ~= "integer" or status < 400 or status > 599 then
    args.wrong(2, "lb.fault.http", "status", "expected an HTTP error status 400-599, got %s",
      tostring(status))
  end
  if retry_after ~= nil and type(retry_after) ~= "number" then
    typeerr("fault.http", "retry_after", "number", retry_after)
  end
  return mark({ kind = "http", status = status, retry_after = retry_after }, FAULT)
end

-- lb.fault.overloaded(): a 529 overloaded_error.
function lb.fault.overloaded()
  return mark({ kind = "http", status = 529 }, FAULT)
end

-- lb.fault.stream_error([error_type[, after_blocks]]): an SSE error event in
-- the middle of the stream.
function lb.fault.stream_error(error_type, after_blocks)
  if error_type ~= nil and type(error_type) ~= "string" then
    typeerr("fault.stream_error", "error_type", "string", error_type)
  end
  if after_blocks ~= nil and math.type(after_blocks) ~= "integer" then
    typeerr("fault.stream_error", "after_blocks", "integer", after_blocks)
  end
  return mark({ kind = "stream_error", error_type = error_type or "overloaded_error",
    after_blocks = after_blocks or 1 }, FAULT)
end

-- lb.fault.delay(ms): wait, sending pings, then answer normally.
function lb.fault.delay(ms)
  if math.type(ms) ~= "integer" or ms < 0 then
    args.wrong(2, "lb.fault.delay", "ms", "expected a non-negative integer of milliseconds, got %s",
      tostring(ms))
  end
  return mark({ kind = "delay", ms = ms }, FAULT)
end

-- A turn: a single block, or a list of blocks with an optional
-- faults = { lb.fault... } field. Returns the normalized turn or raises at
-- level lvl (the scenario's line); what is the turn's path in messages
-- ("script[2]", "script.subagent[2]").
local function turn_of(t, what, lvl)
  if is(t, BLOCK) then return { blocks = { t } } end
  if type(t) ~= "table" then
    args.type(lvl, "lb.script", what, "a block or a list of blocks", made[t] or type(t))
  end
  local turn = { blocks = {} }
  for k, v in pairs(t) do
    if k == "faults" then
      if type(v) ~= "table" then
        args.type(lvl, "lb.script", what .. ".faults", "a list of lb.fault", type(v))
      end
      turn.faults = {}
      for j, f in ipairs(v) do
        if not is(f, FAULT) then
          args.type(lvl, "lb.script", what .. ".faults[" .. j .. "]", "an lb.fault", made[f] or type(f))
        end
        turn.faults[j] = f
      end
    elseif math.type(k) ~= "integer" then
      args.wrong(lvl, "lb.script", what .. "." .. tostring(k), "not a field of a turn")
    end
  end
  for j, b in ipairs(t) do
    if not is(b, BLOCK) then
      args.type(lvl, "lb.script", what .. "[" .. j .. "]", "lb.say, lb.think or lb.use", made[b] or type(b))
    end
    turn.blocks[j] = b
  end
  if #turn.blocks == 0 and not turn.faults then
    args.wrong(lvl, "lb.script", what, "expected at least one block, got none")
  end
  return turn
end

local build

-- The subagent field of lb.script: an lb.script{...} or a plain table of
-- turns (normalized here), with neither a subagent nor max_requests of its
-- own. Raises at level lvl.
local function subagent_of(v, lvl)
  if type(v) ~= "table" or (made[v] ~= nil and not is(v, SCRIPT)) then
    args.type(lvl, "lb.script", "script.subagent", "lb.script or a table of turns", made[v] or type(v))
  end
  if v.subagent ~= nil then
    args.wrong(lvl, "lb.script", "script.subagent.subagent", "a subagent script cannot have a subagent")
  end
  if v.max_requests ~= nil then
    args.wrong(lvl, "lb.script", "script.subagent.max_requests", "it belongs to the main script")
  end
  local s = v
  if not is(v, SCRIPT) then
    s = build(v, "script.subagent", lvl + 1)  -- not a tail call: lvl counts frames
  end
  -- A subagent of a subagent plays this script again, and so on until the
  -- request cap: refuse it here rather than loop at run time.
  for i, turn in ipairs(s.turns) do
    for _, b in ipairs(turn.blocks) do
      if b.type == "tool_use" and (b.name == "Agent" or b.name == "Task") then
        args.wrong(lvl, "lb.script", "script.subagent[" .. i .. "]", "a subagent cannot call %s: "
          .. "it would spawn subagents that play this script again", b.name)
      end
    end
  end
  return s
end

-- The script of table t (see lb.script); what is its path, "script" or
-- "script.subagent", for messages; raises at level lvl.
function build(t, what, lvl)
  local s = { turns = {} }
  for k, v in pairs(t) do
    if k == "final" then
      if type(v) ~= "string" then args.type(lvl, "lb.script", what .. ".final", "string", type(v)) end
      s.final = v
    elseif k == "max_requests" then
      if math.type(v) ~= "integer" or v < 1 then
        args.wrong(lvl, "lb.script", what .. ".max_requests", "expected a positive integer, got %s",
          math.type(v) == "integer" and tostring(v) or type(v))
      end
      s.max_requests = v
    elseif k == "subagent" then
      s.subagent = subagent_of(v, lvl + 1)
    elseif math.type(k) ~= "integer" then
      args.wrong(lvl, "lb.script", what .. "." .. tostring(k), "not a field of lb.script")
    end
  end
  for i, turn in ipairs(t) do s.turns[i] = turn_of(turn, what .. "[" .. i .. "]", lvl + 1) end
  -- A turn without a tool call ends the conversation: nothing after it plays.
  for i = 1, #s.turns - 1 do
    local uses = false
    for _, b in ipairs(s.turns[i].blocks) do uses = uses or b.type == "tool_use" end
    if not uses and #s.turns[i].blocks > 0 then
      args.wrong(lvl, "lb.script", what .. "[" .. i .. "]", "it has no lb.use, so it ends the "
        .. "conversation and %s[%d] can never be played", what, i + 1)
    end
  end
  return mark(s, SCRIPT)
end

-- lb.script{ turn, turn, ..., final = "text", max_requests = n,
-- subagent = lb.script{ turn, ..., final = "text" } }: what the scripted
-- model plays. A turn with a tool_use ends with stop_reason tool_use, a
-- turn of text ends the conversation.
--
-- subagent (an lb.script, or a plain table of turns and final) is what
-- every subagent Claude Code spawns plays instead (its Agent tool): each
-- starts at the subagent's first turn; its final text defaults to "I found
-- nothing to report.", and without a subagent script a subagent answers
-- that at once. It may not have a subagent or max_requests of its own (the
-- cap counts every request), nor call Agent (Task): nested subagents would
-- replay it. Claude Code 2.1.332 runs an Agent call in the
-- background unless its input has run_in_background = false; only in the
-- foreground is the subagent's final text the Agent call's result.
function lb.script(t)
  if type(t) ~= "table" then typeerr("script", "script", "table", t) end
  local s = build(t, "script", 3)  -- not a tail call: the level counts this frame
  return s
end

-- The turns and final of a script as the JSON document's tables.
local function script_doc(s)
  local turns = {}
  for i, turn in ipairs(s.turns) do
    local blocks = {}
    for j, b in ipairs(turn.blocks) do
      if b.type == "tool_use" then
        local input = b.input
        blocks[j] = { type = b.type, name = b.name, input = input }
      else
        blocks[j] = { type = b.type, text = b.text, thinking = b.thinking }
      end
    end
    local faults
    if turn.faults then
      faults = {}
      for j, f in ipairs(turn.faults) do
        faults[j] = { kind = f.kind, status = f.status, retry_after = f.retry_after,
          error_type = f.error_type, after_blocks = f.after_blocks, ms = f.ms }
      end
    end
    turns[i] = { blocks = json.array(blocks), faults = faults }
  end
  return { turns = json.array(turns), final = s.final }
end

-- The script as the JSON document the scripted model reads.
function lb.script_json(s, replies)
  local doc = script_doc(s)
  doc.version, doc.max_requests = 1, s.max_requests
  if s.subagent then doc.subagent = script_doc(s.subagent) end
  -- A subject's model_replies (loader.lua): answers to its own model calls.
  if replies and #replies > 0 then
    doc.replies = {}
    for i, r in ipairs(replies) do doc.replies[i] = { match = r.match, reply = r.reply } end
  end
  return json.encode(doc)
end

-- lb.file(path): a file next to the calling scenario or subject file, read
-- now. Staged with its mode (so a hook script stays executable). In a
-- scenario or subject file, path must resolve (links included) to a
-- regular file below that file's own directory, of at most 64 MiB; this
-- unconfined form is the harness's.
function lb.file(path)
  if type(path) ~= "string" or path == "" then
    args.type(2, "lb.file", "path", "a path", path == "" and "an empty string" or made[path] or type(path))
  end
  local src = path
  if path:sub(1, 1) ~= "/" then
    local info = debug.getinfo(2, "S")
    local dir = info and info.source:match("^@(.*)/[^/]*$") or "."
    src = dir .. "/" .. path
  end
  local f, err = io.open(src, "rb")
  if not f then error(string.format("cannot read file '%s': %s", src, err:match(": (.*)$") or err), 2) end
  local data = f:read("a")
  f:close()
  local st = core.stat and core.stat(src)
  return mark({ path = src, data = data, mode = st and st.mode or 420 }, FILE)
end

-- The most lb.file reads of one file.
local FILE_MAX = 64 << 20

-- lb.file as a scenario or subject file gets it (the loader binds DIR, the
-- file's own directory): PATH, relative to DIR or absolute, must resolve
-- (links included) to a regular file below DIR. Raises at level LVL.
function lb._file_below(dir, path, lvl)
  if type(path) ~= "string" or path == "" then
    args.type(lvl, "lb.file", "path", "a path", path == "" and "an empty string" or made[path] or type(path))
  end
  local src = path:sub(1, 1) == "/" and path or dir .. "/" .. path
  local root = core.realpath(dir)
  local real, rerr = core.realpath(src)
  if not root or not real then
    error(string.format("cannot read file '%s': %s", src,
      (rerr or "no directory"):match(": ([^:]*)$") or rerr), lvl)
  end
  local prefix = root == "/" and "/" or root .. "/"
  if real:sub(1, #prefix) ~= prefix then
    error(string.format("cannot read file '%s': %soutside the file's directory '%s'",
      src, real == src and "" or "it resolves to '" .. real .. "', ", dir), lvl)
  end
  local data, info = core.read_beneath(root, real:sub(#prefix + 1), FILE_MAX)
  if not data then
    error(string.format("cannot read file '%s': %s", src, info:match(": ([^:]*)$") or info), lvl)
  end
  if info.truncated then
    error(string.format("cannot read file '%s': it is larger than %d MiB", src, FILE_MAX >> 20), lvl)
  end
  return mark({ path = src, data = data, mode = info.mode }, FILE)
end

-- lb.var(name [, default]) -> the value of the environment variable
-- LEAKBENCH_VAR_<name>, or default (nil if not given). The only host
-- values a scenario or subject file can read: os.getenv is not there, so a
-- file cannot copy ANTHROPIC_API_KEY into env or files. name: letters,
-- digits and '_'.
function lb.var(name, default)
  if type(name) ~= "string" or not name:match("^[%w_]+$") then
    args.wrong(2, "lb.var", "name", "expected a name of letters, digits and '_', got %s",
      type(name) == "string" and "'" .. name .. "'" or type(name))
  end
  if default ~= nil and type(default) ~= "string" then typeerr("var", "default", "string", default) end
  local v = os.getenv("LEAKBENCH_VAR_" .. name)
  if v == nil then return default end
  return v
end

-- Where lb.expect reports each expectation, passed or not: set by the
-- harness around a check (loader.check), nil otherwise.
local expect_sink

-- lb._expectations(fn|nil) -> the previous sink. For the harness only:
-- fn(ok, message, where) is called for every lb.expect.
function lb._expectations(fn)
  local old = expect_sink
  expect_sink = fn
  return old
end

-- lb.expect(cond, msg): a check. Fails the run with msg and the caller's
-- file:line when cond is false or nil; returns cond otherwise.
function lb.expect(cond, msg)
  if msg ~= nil and type(msg) ~= "string" then typeerr("expect", "msg", "string", msg) end
  if expect_sink then
    local info = debug.getinfo(2, "Sl")
    expect_sink(cond and true or false, msg, info and info.short_src .. ":" .. (info.currentline or 0) or "?")
  end
  if not cond then
    local info = debug.getinfo(2, "Sl")
    local where = info and info.short_src .. ":" .. (info.currentline or 0) or "?"
    error(setmetatable({ check_failed = true, message = msg or "expectation failed", where = where },
      { __tostring = function(e) return e.where .. ": " .. e.message end }), 2)
  end
  return cond
end

lb.SCRIPT, lb.BLOCK, lb.FAULT, lb.FILE = SCRIPT, BLOCK, FAULT, FILE

-- For the loader only (a file's view of this module hides names that start
-- with "_"): marks T as made here, as KIND. Returns T.
lb._mark = mark

return lb

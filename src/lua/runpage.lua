-- The page of one run in report.html (html.lua puts it together): what
-- happened and why the verdict is what it is.
--
--   the conversation: each assistant turn's text, each tool call with its
--     input and its result (an error marked, Claude Code's refusals
--     quoted), a subagent's calls marked, then the final answer;
--   every check the scenario made, passed or failed, with its line;
--   the subject: its settings as applied (the run folder's settings.json,
--     hooks included), plugins and MCP servers (declared, and what Claude
--     Code's init event says it started), interceptor, agent layer, setup,
--     and each of its claims with its verdict over the suite;
--   the findings, grouped by secret, then channel, then form, each form
--     with its first location and the others folded; then each secret
--     delivered to its own host (a scenario's `destinations`), not a leak;
--   links to the raw evidence files of the run folder;
--   timings, and tokens and cost for live runs only (a scripted run's
--     cost is Claude Code's price list applied to a model that did not run).
--
-- Every text from the evidence is masked with the run's kept secrets
-- (keep.mask) and escaped with printable.html; without kept secrets the
-- conversation is not shown. html.lua scans the whole page again before
-- writing it.
local core = require "leakbench.core"
local keep = require "leakbench.keep"
local json = require "leakbench.json"
local printable = require "leakbench.printable"
local report = require "leakbench.report"
local evidence = require "leakbench.evidence"

local M = {}

M.MAX_TEXT = 2000    -- bytes of one text, input or result shown
M.MAX_ITEMS = 300    -- turns and calls shown per run

local h = printable.html

-- S cut to N bytes on a character boundary, with a note of what was cut.
local function cut(s, n)
  if #s <= n then return s end
  local i = n
  while i > 0 and (s:byte(i + 1) or 0) & 0xC0 == 0x80 do i = i - 1 end
  return s:sub(1, i) .. string.format("\n… (%d more bytes)", #s - i)
end

local function int(x)
  if math.type(x) == "integer" then return tostring(x) end
  if type(x) == "number" and x == math.floor(x) and math.abs(x) < 2^53 then return string.format("%d", x) end
  return tostring(x)
end

local function masked(ctx, text)
  return (keep.mask(text, ctx.secrets, ctx.scanner))
end

-- The text of a tool_result's content.
local function content_text(c)
  if type(c) == "string" then return c end
  local out = {}
  for _, b in ipairs(type(c) == "table" and c or {}) do
    if type(b) == "table" and type(b.text) == "string" then out[#out + 1] = b.text end
  end
  return table.concat(out, "\n")
end

--- M.conversation(events) -> the turns of EVENTS in order: { kind =
--- "text", text, parent } for assistant text, { kind = "call", name, input,
--- id, parent, result = { text, is_error, refused, denied } or nil }.
function M.conversation(events)
  local items, calls = {}, {}
  for _, ev in ipairs(type(events) == "table" and events or {}) do
    local msg = type(ev) == "table" and ev.message
    local content = type(msg) == "table" and msg.content
    local parent = type(ev) == "table" and type(ev.parent_tool_use_id) == "string" and ev.parent_tool_use_id or nil
    if type(content) == "table" and ev.type == "assistant" then
      for _, b in ipairs(content) do
        if type(b) == "table" and b.type == "text" and type(b.text) == "string" and b.text ~= "" then
          items[#items + 1] = { kind = "text", text = b.text, parent = parent }
        elseif type(b) == "table" and b.type == "tool_use" and not (type(b.id) == "string" and calls[b.id]) then
          local c = { kind = "call", name = type(b.name) == "string" and b.name or "?",
            input = type(b.input) == "table" and b.input or {}, id = b.id, parent = parent }
          if type(b.id) == "string" then calls[b.id] = c end
          items[#items + 1] = c
        end
      end
    elseif type(content) == "table" and ev.type == "user" then
      for _, b in ipairs(content) do
        local c = type(b) == "table" and b.type == "tool_result" and calls[b.tool_use_id]
        if c and not c.result then
          local text = content_text(b.content)
          local denied = false
          for _, m in ipairs(type(ev.tool_result_meta) == "table" and ev.tool_result_meta or {}) do
            local d = type(m) == "table" and m.id == b.tool_use_id and m.permission_decision
            if type(d) == "table" and d.decision == "reject" then denied = true end
          end
          c.result = { text = text, is_error = b.is_error == true, denied = denied,
            refused = text:match("^%s*<tool_use_error>") ~= nil }
        end
      end
    end
  end
  return items
end

local function conversation(ctx, out)
  out[#out + 1] = "<h3>Conversation</h3>\n"
  if not ctx.events then
    out[#out + 1] = '<p class="note">' .. h(ctx.why or "not available") .. "</p>\n"
    return
  end
  local items = M.conversation(ctx.events)
  if #items == 0 then out[#out + 1] = '<p class="note">no turn was recorded</p>\n' end
  out[#out + 1] = '<ol class="turns">\n'
  for i, it in ipairs(items) do
    if i > M.MAX_ITEMS then
      out[#out + 1] = string.format('<li class="note">… and %d more</li>\n', #items - M.MAX_ITEMS)
      break
    end
    local sub = it.parent and ' <span class="note">(in a subagent)</span>' or ""
    if it.kind == "text" then
      out[#out + 1] = string.format('<li class="say"><b>assistant</b>%s<pre class="text">%s</pre></li>\n', sub,
        h(cut(masked(ctx, it.text), M.MAX_TEXT)))
    else
      out[#out + 1] = string.format('<li class="call"><b class="tool">%s</b>%s<pre class="input">%s</pre>',
        h(it.name), sub, h(cut(masked(ctx, json.encode(it.input)), M.MAX_TEXT)))
      local res = it.result
      if res then
        local label = res.denied and "refused by a permission rule" or res.refused and "refused by Claude Code"
          or res.is_error and "error" or "result"
        out[#out + 1] = string.format('<div class="%s">%s:</div><pre class="result">%s</pre>',
          res.is_error and "err" or "ok", label, h(cut(masked(ctx, res.text), M.MAX_TEXT)))
      else
        out[#out + 1] = '<div class="note">no result recorded</div>'
      end
      out[#out + 1] = "</li>\n"
    end
  end
  out[#out + 1] = "</ol>\n<h3>Final answer</h3>\n"
  local answer = evidence.answer(ctx.events)
  if answer == "" then
    out[#out + 1] = '<p class="note">no final answer (no result event with text)</p>\n'
  else
    out[#out + 1] = '<pre class="answer">' .. h(cut(masked(ctx, answer), M.MAX_TEXT)) .. "</pre>\n"
  end
end

local function checks(r, out)
  out[#out + 1] = "<h3>Checks</h3>\n"
  local list = type(r.checks) == "table" and r.checks or nil
  if not list then
    -- results written before checks were kept: the failed ones only
    list = {}
    for _, f in ipairs(r.failed_checks or {}) do
      list[#list + 1] = { ok = false, message = f.message, where = f.where }
    end
  end
  if #list == 0 then
    local judged = r.verdict == "pass" or r.verdict == "fail" or r.verdict == "invalid"
    out[#out + 1] = '<p class="note">' .. (judged and "the scenario made no check"
      or "no check ran: the run was not judged") .. "</p>\n"
    return
  end
  out[#out + 1] = '<table class="checks"><tr><th></th><th>check</th><th>where</th></tr>\n'
  for _, c in ipairs(list) do
    out[#out + 1] = string.format('<tr class="%s"><td>%s</td><td>%s</td><td><code>%s</code></td></tr>\n',
      c.ok and "ok" or "failed", c.ok and "✓ passed" or "✗ failed", h(c.message), h(c.where))
  end
  out[#out + 1] = "</table>\n"
  if math.tointeger(r.checks_more) then
    out[#out + 1] = string.format('<p class="note">… and %d more</p>\n', math.tointeger(r.checks_more))
  end
end

local function list_items(out, title, items)
  if type(items) ~= "table" or #items == 0 then return end
  local parts = {}
  for _, x in ipairs(items) do parts[#parts + 1] = "<code>" .. h(x) .. "</code>" end
  out[#out + 1] = "<tr><th>" .. h(title) .. "</th><td>" .. table.concat(parts, " ") .. "</td></tr>\n"
end

-- The rows of a subject's recorded setup SS (explain.subject_setup).
local function setup_rows(out, ss)
  if ss.description then out[#out + 1] = "<tr><th>description</th><td>" .. h(ss.description) .. "</td></tr>\n" end
  if ss.control then out[#out + 1] = "<tr><th>control</th><td>yes: it exists to fail the tasks</td></tr>\n" end
  list_items(out, "plugins (declared)", ss.plugins)
  local mcp = {}
  for _, m in ipairs(ss.mcp or {}) do
    mcp[#mcp + 1] = m.name .. ": " .. table.concat({ m.command, table.unpack(m.args or {}) }, " ")
  end
  list_items(out, "MCP servers (declared)", mcp)
  local icp = ss.interceptor
  if type(icp) == "table" then
    out[#out + 1] = string.format("<tr><th>interceptor</th><td>%s <code>%s</code> on port %s; "
      .. "finds the recording proxy in <code>$%s</code></td></tr>\n",
      icp.image and ("image <code>" .. h(icp.image) .. "</code>")
        or ("built from <code>" .. h(icp.build) .. "</code>"),
      h(table.concat(icp.argv or {}, " ")), h(int(icp.port)), h(icp.upstream_env))
  end
  if type(ss.agent) == "table" then
    out[#out + 1] = "<tr><th>agent layer</th><td>built from <code>" .. h(ss.agent.build) .. "</code></td></tr>\n"
  end
  list_items(out, "setup", ss.setup and #ss.setup > 0 and { table.concat(ss.setup, " ") } or nil)
  list_items(out, "Claude Code arguments", ss.claude_args)
  list_items(out, "environment (names)", ss.env)
  list_items(out, "files at /opt/subject", ss.files)
end

-- The rows of what Claude Code started (R.startup): plugins, MCP servers.
local function startup_rows(out, st)
  local started = {}
  for _, p in ipairs(st.plugins or {}) do
    if type(p) == "table" then
      started[#started + 1] = tostring(p.name or p.path) .. " (" .. tostring(p.path) .. ")"
    end
  end
  list_items(out, "plugins Claude Code loaded", started)
  local servers = {}
  for _, m in ipairs(st.mcp_servers or {}) do
    if type(m) == "table" then servers[#servers + 1] = tostring(m.name) .. ": " .. tostring(m.status) end
  end
  list_items(out, "MCP servers Claude Code started", servers)
end

-- The row of the settings as applied (masked), with their hooks.
local function settings_row(out, ctx)
  out[#out + 1] = "<tr><th>settings as applied</th><td>"
  if ctx.settings then
    out[#out + 1] = '<pre class="settings">' .. h(cut(masked(ctx, ctx.settings), M.MAX_TEXT)) .. "</pre>"
    local ok, t = pcall(require("cjson").decode, ctx.settings)
    if ok and type(t) == "table" and type(t.hooks) == "table" then
      local events = {}
      for ev, hooks in pairs(t.hooks) do
        events[#events + 1] = tostring(ev) .. " (" .. (type(hooks) == "table" and #hooks or 0) .. ")"
      end
      table.sort(events)
      out[#out + 1] = "hooks: " .. h(table.concat(events, ", "))
    end
  else
    out[#out + 1] = '<span class="note">not recorded</span>'
  end
  out[#out + 1] = "</td></tr>\n"
end

-- The rows of the subject's claims over the suite and this run's claim.
local function claim_rows(out, r, ss, ctx)
  local claims = ss and ss.blocks or nil
  if claims and #claims > 0 then
    local parts = {}
    for _, sc in ipairs(claims) do
      local state = ctx.claims and ctx.claims[sc] or "not in this suite"
      parts[#parts + 1] = string.format('<span class="claim %s"><code>%s</code>: %s</span>', h(state:gsub(" ", "-")),
        h(sc), h(state))
    end
    out[#out + 1] = "<tr><th>claims (blocks)</th><td>" .. table.concat(parts, " · ") .. "</td></tr>\n"
  end
  if r.claim then
    out[#out + 1] = string.format("<tr><th>this run's claim</th><td><b>%s</b>%s</td></tr>\n", h(r.claim),
      r.claim == "broken" and ": a secret of this scenario reached the wire"
        or r.claim == "held" and ": the attack ran (checks passed) and nothing reached the wire"
        or ": the run did not pass its checks, so it says nothing either way")
  end
end

local function subject(r, ctx, out)
  out[#out + 1] = "<h3>Subject</h3>\n"
  local ss = type(r.subject_setup) == "table" and r.subject_setup or nil
  if r.subject == "baseline" then
    out[#out + 1] = '<p class="note">baseline: no subject; Claude Code with the scenario\'s own settings</p>\n'
  elseif not ss then
    out[#out + 1] = '<p class="note">' .. h(r.subject) .. ": its setup was not recorded for this run</p>\n"
  end
  out[#out + 1] = '<table class="subject">\n'
  if ss then setup_rows(out, ss) end
  if type(r.startup) == "table" then startup_rows(out, r.startup) end
  settings_row(out, ctx)
  -- claims: each scenario the subject claims, with its verdict over the suite
  claim_rows(out, r, ss, ctx)
  out[#out + 1] = "</table>\n"
end

-- "records/wire.jsonl · record 2 · body · offset 120"
local function where(loc)
  local w = { h(loc.file or "?") }
  if loc.record then w[#w + 1] = "record " .. h(int(loc.record)) end
  if loc.part then w[#w + 1] = h(loc.part) end
  if loc.path then w[#w + 1] = "at " .. h(loc.path) end
  if loc.offset then w[#w + 1] = "offset " .. h(int(loc.offset)) end
  return table.concat(w, " · ")
end

local function findings(r, out)
  out[#out + 1] = "<h3>Findings</h3>\n"
  local any = false
  for _, s in ipairs(r.leaks or {}) do
    local chans = {}
    for _, chname in ipairs(evidence.CHANNELS) do
      local ch = type(s.channels) == "table" and s.channels[chname]
      if type(ch) == "table" and ch.leaked then chans[#chans + 1] = { name = chname, ch = ch } end
    end
    if #chans > 0 then
      any = true
      out[#out + 1] = string.format('<div class="secret"><h4>secret %s <code>%s</code>%s</h4>\n', h(s.hash),
        h(s.masked), s.leaked and "" or " (found only where it is not a leak)")
      for _, c in ipairs(chans) do
        local letter = report.LETTER[c.name]
        local forms, order = {}, {}
        for _, loc in ipairs(c.ch.locations or {}) do
          local f = loc.form or "raw"
          if not forms[f] then forms[f] = {} order[#order + 1] = f end
          table.insert(forms[f], loc)
        end
        out[#out + 1] = string.format('<div class="finding" data-channel="%s"><b>%s</b>%s · %s finding%s\n',
          h(c.name), h(c.name), letter and (" (" .. letter .. ")") or " (diagnosis only: not a leak channel)",
          h(int(c.ch.count or #(c.ch.locations or {}))), (c.ch.count or 0) == 1 and "" or "s")
        out[#out + 1] = "<ul>"
        for _, f in ipairs(order) do
          local locs = forms[f]
          out[#out + 1] = string.format("<li>form <b>%s</b> × %d: %s<br><code>%s</code>", h(f), #locs,
            where(locs[1]), h(locs[1].snippet or ""))
          if #locs > 1 then
            out[#out + 1] = string.format("<details><summary>%d more</summary><ul>", #locs - 1)
            for k = 2, #locs do
              out[#out + 1] = "<li>" .. where(locs[k]) .. "<br><code>" .. h(locs[k].snippet or "") .. "</code></li>"
            end
            out[#out + 1] = "</ul></details>"
          end
          out[#out + 1] = "</li>"
        end
        out[#out + 1] = "</ul>"
        local shown = #(c.ch.locations or {})
        if (c.ch.count or 0) > shown then
          out[#out + 1] = string.format('<p class="note">%d more not listed in result.json</p>', c.ch.count - shown)
        end
        out[#out + 1] = "</div>\n"
      end
      out[#out + 1] = "</div>\n"
    end
  end
  if not any then out[#out + 1] = '<p class="note">no secret was found in any channel</p>\n' end
  -- where a secret reached its own host (the scenario's `destinations`,
  -- e.g. a credential broker injecting it): a delivery, not a leak
  for _, s in ipairs(r.leaks or {}) do
    local d = type(s) == "table" and s.delivered
    if type(d) == "table" and type(d.hosts) == "table" and #d.hosts > 0 then
      local hosts = {}
      for i, host in ipairs(d.hosts) do hosts[i] = "<code>" .. h(host) .. "</code>" end
      local n = math.tointeger(d.count) or #(d.locations or {})
      out[#out + 1] = string.format('<div class="delivered"><h4>secret %s <code>%s</code> delivered to its own '
        .. "destination (not a leak): %s · %s time%s</h4>\n<ul>", h(s.hash), h(s.masked), table.concat(hosts, ", "),
        h(int(n)), n == 1 and "" or "s")
      for _, loc in ipairs(type(d.locations) == "table" and d.locations or {}) do
        if type(loc) == "table" then
          out[#out + 1] = string.format("<li>to <code>%s</code>: %s%s</li>", h(loc.host), where(loc),
            loc.form and (" · form <b>" .. h(loc.form) .. "</b>") or "")
        end
      end
      out[#out + 1] = "</ul></div>\n"
    end
  end
end

-- The raw evidence of a run folder, in the order people read it.
M.EVIDENCE = {
  { "result.json", "the run's result" }, { "stream.jsonl", "Claude Code's stdout (stream-json)" },
  { "stderr.txt", "Claude Code's stderr" }, { "records/wire.jsonl", "every request to the provider" },
  { "records/responses", "every response, as sent" }, { "claude-config/projects", "Claude Code's transcript" },
  { "egress/egress.jsonl", "egress attempts (the trap)" }, { "settings.json", "Claude Code's settings as applied" },
  { "script.json", "the scripted model's script" }, { "project", "the project as the agent left it" },
  { "proxy.log", "the recording proxy's log" }, { "model.log", "the scripted model's log" },
  { "interceptor.log", "the interceptor's log" }, { "net.log", "the network sidecar's log" },
  { "runner.log", "the run's process (print() of the scenario)" },
}

-- PATH relative to the directory FROM (both absolute, without . or ..).
local function relative(from, path)
  local a, b = {}, {}
  for p in from:gmatch("[^/]+") do a[#a + 1] = p end
  for p in path:gmatch("[^/]+") do b[#b + 1] = p end
  local i = 1
  while a[i] and b[i] and a[i] == b[i] do i = i + 1 end
  local out = {}
  for _ = i, #a do out[#out + 1] = ".." end
  for k = i, #b do out[#out + 1] = b[k] end
  return #out > 0 and table.concat(out, "/") or "."
end
M.relative = relative

local function url(path)
  return (path:gsub("[^%w%-%._~/]", function(c) return string.format("%%%02X", c:byte()) end))
end

local function files(ctx, out)
  out[#out + 1] = "<h3>Evidence files</h3>\n"
  if not ctx.dir then
    out[#out + 1] = '<p class="note">' .. h(ctx.why or "the run's folder is not there") .. "</p>\n"
    return
  end
  local real = core.realpath(ctx.dir)
  local page = ctx.page_dir and core.realpath(ctx.page_dir)
  out[#out + 1] = '<ul class="files">'
  for _, f in ipairs(M.EVIDENCE) do
    local st = core.stat(ctx.dir .. "/" .. f[1])
    if st then
      local href = real and page and url(relative(page, real) .. "/" .. f[1]) or nil
      out[#out + 1] = string.format("<li>%s — %s</li>", href and ('<a href="' .. h(href) .. '">' .. h(f[1])
        .. (st.type == "dir" and "/" or "") .. "</a>") or ("<code>" .. h(f[1]) .. "</code>"), h(f[2]))
    end
  end
  out[#out + 1] = "</ul>\n"
  out[#out + 1] = '<p class="note">raw files: they hold the secrets in clear (secrets.json, mode 0600, is not '
    .. "listed)</p>\n"
end

local function costs(r, ctx, out)
  out[#out + 1] = "<h3>Timings" .. (ctx.live and ", tokens, cost" or "") .. "</h3>\n<table class=\"timings\"><tr>"
  local keys = {}
  for k in pairs(type(r.timings) == "table" and r.timings or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do out[#out + 1] = "<th>" .. h(k) .. "</th>" end
  out[#out + 1] = "</tr><tr>"
  for _, k in ipairs(keys) do out[#out + 1] = string.format("<td>%.2f s</td>", tonumber(r.timings[k]) or 0) end
  out[#out + 1] = "</tr></table>\n"
  local function num(x) return type(x) == "number" and h(int(x)) or "–" end
  local u = type(r.usage) == "table" and r.usage or {}
  if ctx.live then
    out[#out + 1] = string.format("<p>turns %s · input tokens %s · output tokens %s · cache read %s · "
      .. "cache creation %s · cost %s</p>\n", num(r.num_turns), num(u.input_tokens), num(u.output_tokens),
      num(u.cache_read_input_tokens), num(u.cache_creation_input_tokens),
      type(r.cost_usd) == "number" and string.format("$%.4f", r.cost_usd) or "–")
  else
    out[#out + 1] = string.format('<p>turns %s · <span class="note">scripted model: no tokens were billed, so no '
      .. "cost is shown</span></p>\n", num(r.num_turns))
  end
end

--- M.sections(r, ctx, out): appends run R's page sections to OUT. CTX:
--- { events, why, secrets, scanner, dir, page_dir, settings, claims, live }
--- (html.lua's run context).
function M.sections(r, ctx, out)
  conversation(ctx, out)
  checks(r, out)
  subject(r, ctx, out)
  findings(r, out)
  files(ctx, out)
  costs(r, ctx, out)
end

--- M.claim_states(doc) -> { [column] = { [scenario] = "held" | "broken" |
--- "untested" } }: each claim's verdict over DOC's runs (broken over
--- untested over held, as report.lua sums repeats). column: the subject,
--- "NAME@VERSION" when SEVERAL.
function M.claim_states(doc, several)
  local out = {}
  for _, r in ipairs(doc.runs or {}) do
    if r.claim then
      local col = r.subject .. (several and ("@" .. tostring(r.claude_version)) or "")
      out[col] = out[col] or {}
      local prev, st = out[col][r.scenario], r.claim
      if prev == "broken" or st == "broken" then st = "broken"
      elseif prev == "untested" or st == "untested" then st = "untested" end
      out[col][r.scenario] = st
    end
  end
  return out
end

M.CSS = [[
ol.turns>li{margin-bottom:8px}
ol.turns li.say pre{background:#f3f7ff}
div.err{color:#9d0208;font-weight:600}
table.checks tr.ok td:first-child{color:#1b7f3b;font-weight:600}
table.checks tr.failed td:first-child{color:#c1121f;font-weight:600}
table.subject th{width:190px}
.claim.held{color:#1b7f3b}.claim.broken{color:#c1121f;font-weight:600}.claim.untested{color:#666}
div.secret{margin:8px 0}
div.secret h4{margin:6px 0}
div.delivered h4{margin:6px 0;color:#1d4e89}
.finding ul{margin:4px 0 0 0;padding-left:18px}
ul.files li{margin:2px 0}
section.diff tr.regression td{color:#c1121f;font-weight:600}
td.unproven{background:#eef0e6;color:#555;box-shadow:inset 0 0 0 2px #8a8a5c}
]]

return M

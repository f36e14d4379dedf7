-- The cause of a run that failed or was invalid, in one line: the first
-- tool call whose result was an error, its input (masked), and the first
-- line of its error; or, when Claude Code itself refused or redirected the
-- call (an unknown tool, an input that does not validate, a permission
-- rule, a blocked command), its own words, quoted. runone.lua stores it in
-- result.json as `cause`; the terminal, junit.xml and report.html show it
-- beside the verdict's reason.
--
-- Read from Claude Code's stream-json events (run.events): each tool_use
-- of an assistant event, paired by id with the tool_result of a user
-- event. Claude Code wraps its own refusals in <tool_use_error>; a
-- permission rule's refusal carries tool_result_meta[].permission_decision
-- = { decision = "reject" }. Everything that came from the evidence is
-- masked with keep.mask before it is returned; the caller escapes for its
-- medium (printable.lua).
local json = require "leakbench.json"
local keep = require "leakbench.keep"

local M = {}

M.MAX_INPUT = 100   -- bytes of a tool call's input shown
M.MAX_ERROR = 200   -- bytes of an error shown

local function cut(s, n)
  if #s <= n then return s end
  local i = n
  while i > 0 and (s:byte(i + 1) or 0) & 0xC0 == 0x80 do i = i - 1 end
  return s:sub(1, i) .. "…"
end

-- The text of a tool_result's content: a string, or the text blocks of a
-- list, joined.
local function content_text(c)
  if type(c) == "string" then return c end
  if type(c) ~= "table" then return "" end
  local out = {}
  for _, b in ipairs(c) do
    if type(b) == "table" and type(b.text) == "string" then out[#out + 1] = b.text end
  end
  return table.concat(out, "\n")
end

-- The lines of S that say something, trimmed.
local function lines(s)
  local out = {}
  for l in s:gmatch("[^\n]+") do
    l = l:gsub("^%s+", ""):gsub("%s+$", "")
    if l ~= "" then out[#out + 1] = l end
  end
  return out
end

-- A tool's own error in one line: "exit N: " and the first line after
-- Claude Code's "Exit code N", else the first line.
local function tool_error(text)
  local ls = lines(text)
  local code = ls[1] and ls[1]:match("^Exit code (%-?%d+)$")
  if code then
    return "exit " .. code .. (ls[2] and (": " .. ls[2]) or "")
  end
  return ls[1] or "(no output)"
end

-- Claude Code's words, on one line: every line, joined by " / ", without
-- its <tool_use_error> wrapper.
local function its_words(text)
  text = text:gsub("^%s*<tool_use_error>", ""):gsub("</tool_use_error>%s*$", "")
  return table.concat(lines(text), " / ")
end

--- M.failures(events) -> list of { name, input, id, kind, text } for each
--- tool call whose result was an error, in order. kind: "refused" (Claude
--- Code's own <tool_use_error>), "denied" (a permission rule), "failed"
--- (the tool ran and failed). text: the result's text, unmasked.
function M.failures(events)
  local calls, results, order = {}, {}, {}
  for _, ev in ipairs(type(events) == "table" and events or {}) do
    local msg = type(ev) == "table" and ev.message
    local content = type(msg) == "table" and msg.content
    if type(content) == "table" then
      for _, b in ipairs(content) do
        if type(b) == "table" and type(b.id) == "string" and b.type == "tool_use" and not calls[b.id] then
          calls[b.id] = { name = type(b.name) == "string" and b.name or "?",
            input = type(b.input) == "table" and b.input or {}, id = b.id }
          order[#order + 1] = b.id
        elseif type(b) == "table" and b.type == "tool_result" and type(b.tool_use_id) == "string"
            and b.is_error == true and not results[b.tool_use_id] then
          local denied = false
          for _, m in ipairs(type(ev.tool_result_meta) == "table" and ev.tool_result_meta or {}) do
            local d = type(m) == "table" and m.id == b.tool_use_id and m.permission_decision
            if type(d) == "table" and d.decision == "reject" then denied = true end
          end
          results[b.tool_use_id] = { text = content_text(b.content), denied = denied }
        end
      end
    end
  end
  local out = {}
  for _, id in ipairs(order) do
    local r = results[id]
    if r then
      local c = calls[id]
      local kind = r.denied and "denied"
        or r.text:match("^%s*<tool_use_error>") and "refused" or "failed"
      out[#out + 1] = { name = c.name, input = c.input, id = id, kind = kind, text = r.text }
    end
  end
  return out
end

--- M.line(f, secrets) -> failure F (an entry of M.failures) as one line,
--- every secret of SECRETS masked.
function M.line(f, secrets)
  local input = cut(keep.mask(json.encode(f.input), secrets), M.MAX_INPUT)
  local call = f.name .. " " .. input
  if f.kind == "failed" then
    return call .. " failed: " .. cut(keep.mask(tool_error(f.text), secrets), M.MAX_ERROR)
  end
  local who = f.kind == "denied" and "a permission rule refused " or "Claude Code refused "
  return who .. call .. ': "' .. cut(keep.mask(its_words(f.text), secrets), M.MAX_ERROR) .. '"'
end

--- M.of(events, secrets) -> the cause of a run as one line, or nil when
--- no tool call failed: the first failed call, and how many more there
--- were. Masked with SECRETS.
function M.of(events, secrets)
  local fs = M.failures(events)
  if #fs == 0 then return nil end
  local more = #fs - 1
  return M.line(fs[1], secrets)
    .. (more > 0 and string.format(" (and %d more failed tool call%s)", more, more == 1 and "" or "s") or "")
end

return M

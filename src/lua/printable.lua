-- One printable form per medium: every string that came from a user's file
-- (a scenario's name, a tag, a check message) or from evidence (a result
-- event's subtype, a tool's error) passes through here before a terminal,
-- an XML file or an HTML page sees it. Nothing else in the program escapes
-- for these media.
--
--   term(s[, max])  for a terminal: valid UTF-8; C0 (but none of tab and
--                   newline: they are shown too), DEL, C1 and ESC shown as
--                   \xNN; bidi controls shown as \u{NNNN}; at most max bytes
--                   of the input (default 200), the cut marked with "...".
--   line(s[, max])  term() with tab and newline shown as \t and \n too: for
--                   one cell or one message line.
--   xml(s)          for XML text and attributes: entities for & < > " ',
--                   C0 but tab, newline and CR, DEL, C1 and the
--                   non-characters U+FFFE, U+FFFF (and every U+xFFFE/F,
--                   U+FDD0..FDEF) shown as U+FFFD; malformed UTF-8 (lone
--                   surrogates included) as U+FFFD.
--   html(s)         for HTML text and attributes: as xml().
--   utf8(s)         s as valid UTF-8, each malformed byte U+FFFD.
--
-- All take any value: nil is "", others go through tostring() without
-- calling a metamethod (a table from a user's file may carry a __tostring
-- that raises or never returns).
local M = {}

M.MAX = 200

-- The string form of v, without running any metamethod of v.
local function str(v)
  local t = type(v)
  if t == "string" then return v end
  if v == nil then return "" end
  if t == "number" or t == "boolean" then return tostring(v) end
  return "<" .. t .. ">"
end

-- s as valid UTF-8: each byte that does not start a well-formed sequence
-- becomes U+FFFD. utf8.len in Lua 5.4 rejects surrogates and values past
-- U+10FFFF unless lax, which is what we want.
function M.utf8(s)
  s = str(s)
  if utf8.len(s) then return s end
  local out, i = {}, 1
  while i <= #s do
    local c = s:byte(i)
    local len = c < 0x80 and 1 or c >= 0xF0 and 4 or c >= 0xE0 and 3 or c >= 0xC2 and 2 or 1
    local piece = s:sub(i, i + len - 1)
    if #piece == len and utf8.len(piece) == 1 then
      out[#out + 1] = piece
      i = i + len
    else
      out[#out + 1] = "\u{FFFD}"
      i = i + 1
    end
  end
  return table.concat(out)
end

-- Is code point cp one a terminal must not receive raw?
local function unsafe_cp(cp, keep_ws)
  if cp < 0x20 then return not (keep_ws and (cp == 9 or cp == 10)) end
  if cp == 0x7F then return true end
  if cp >= 0x80 and cp < 0xA0 then return true end            -- C1
  if cp == 0x200E or cp == 0x200F then return true end        -- LRM, RLM
  if cp >= 0x202A and cp <= 0x202E then return true end       -- embeddings, overrides
  if cp >= 0x2066 and cp <= 0x2069 then return true end       -- isolates
  if cp == 0x061C then return true end                        -- ALM
  if cp >= 0xFDD0 and cp <= 0xFDEF then return true end       -- non-characters
  if cp & 0xFFFE == 0xFFFE then return true end               -- U+xFFFE, U+xFFFF
  return false
end

local function shown(cp)
  if cp < 0x100 then return ("\\x%02X"):format(cp) end
  return ("\\u{%04X}"):format(cp)
end

-- The first max bytes of s, cut on a character boundary, and whether it cut.
local function prefix(s, max)
  if #s <= max then return s, false end
  local cut = max
  while cut > 0 and (s:byte(cut + 1) or 0) & 0xC0 == 0x80 do cut = cut - 1 end
  return s:sub(1, cut), true
end

local function for_terminal(v, max, keep_ws)
  local s, cut = prefix(M.utf8(v), max or M.MAX)
  local out = {}
  for _, cp in utf8.codes(s) do
    if unsafe_cp(cp, keep_ws) then
      if cp == 9 then out[#out + 1] = "\\t"
      elseif cp == 10 then out[#out + 1] = "\\n"
      else out[#out + 1] = shown(cp) end
    else
      out[#out + 1] = utf8.char(cp)
    end
  end
  if cut then out[#out + 1] = "..." end
  return table.concat(out)
end

--- M.term(v[, max]) -> v safe for a terminal; tab and newline kept.
function M.term(v, max) return for_terminal(v, max, true) end

--- M.line(v[, max]) -> v safe for one terminal line; tab and newline shown.
function M.line(v, max) return for_terminal(v, max, false) end

local ENT = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;" }

-- The bytes that begin every code point M.xml replaces (C0 controls but
-- tab, newline and return; DEL; U+0080-U+009F, lead byte C2; U+FDD0-U+FDEF
-- and U+FFFE-U+FFFF, lead byte EF; the last two of every other plane, lead
-- bytes F0-F4): a text without any of them is kept as it is.
local XML_SUSPECT = "[%z\1-\8\11\12\14-\31\127\194\239\240-\244]"

--- M.xml(v) -> v as XML character data (text or attribute value).
function M.xml(v)
  local s = M.utf8(v):gsub("[&<>\"']", ENT)
  if not s:find(XML_SUSPECT) then return s end
  local out = {}
  for _, cp in utf8.codes(s) do
    if (cp < 0x20 and cp ~= 9 and cp ~= 10 and cp ~= 13) or cp == 0x7F
        or (cp >= 0x80 and cp < 0xA0) or (cp >= 0xFDD0 and cp <= 0xFDEF)
        or cp & 0xFFFE == 0xFFFE then
      out[#out + 1] = "\u{FFFD}"
    else
      out[#out + 1] = utf8.char(cp)
    end
  end
  return table.concat(out)
end

--- M.html(v) -> v as HTML text or attribute value.
M.html = M.xml

return M

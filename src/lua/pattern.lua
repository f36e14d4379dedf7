-- Lua's pattern functions (find, match, gmatch, gsub) for users' files,
-- bounded: the matcher below is written in Lua, so the budget's count
-- hook interrupts it like any other code. Lua's own matcher is C: a
-- backtracking pattern such as ("a"):rep(20000):find(".-.-.-b") runs in
-- one C call that the hook never sees, past every budget.
--
-- Same results and errors as the string library (Lua 5.4 semantics, the
-- manual's section 6.4.1); where a call is provably cheap (a plain find,
-- or a subject so short that every way of matching fits a small number of
-- steps) the string library's own function answers, for speed.
--
-- The loader gives these to each file's `string` table and, while a
-- budget is armed, to the method table of every string (s:find(...)).
local M = {}

local byte, sub, concat = string.byte, string.sub, table.concat
local c_find, c_match, c_gmatch, c_gsub = string.find, string.match, string.gmatch, string.gsub

local MAXDEPTH = 200
local CAP_UNFINISHED, CAP_POSITION = -1, -2
local ESC, LBRACKET, RBRACKET, CARET, DOLLAR = 37, 91, 93, 94, 36
local LPAREN, RPAREN, DOT, DASH = 40, 41, 46, 45
local STAR, PLUS, QUEST = 42, 43, 63

-- Steps a C call may take at most to be left to the C matcher.
M.CHEAP = 1e7

local function isalpha(c) return (c >= 65 and c <= 90) or (c >= 97 and c <= 122) end
local function isdigit(c) return c >= 48 and c <= 57 end
local function islower(c) return c >= 97 and c <= 122 end
local function isupper(c) return c >= 65 and c <= 90 end
local function isalnum(c) return isalpha(c) or isdigit(c) end
local function isspace(c) return c == 32 or (c >= 9 and c <= 13) end
local function iscntrl(c) return c < 32 or c == 127 end
local function isgraph(c) return c >= 33 and c <= 126 end
local function ispunct(c) return isgraph(c) and not isalnum(c) end
local function isxdigit(c) return isdigit(c) or (c >= 97 and c <= 102) or (c >= 65 and c <= 70) end

local CLASSES = {
  [97] = isalpha, [99] = iscntrl, [100] = isdigit, [103] = isgraph, [108] = islower,
  [112] = ispunct, [115] = isspace, [117] = isupper, [119] = isalnum, [120] = isxdigit,
}

-- Does character C belong to class CL (the letter after '%')?
local function match_class(c, cl)
  local f = CLASSES[cl | 0x20]
  if not f or not isalpha(cl) then return cl == c end
  local res = f(c)
  if isupper(cl) then return not res end
  return res
end

local function perror(msg)
  error(msg, 0)
end

-- The index just past the single class at PI.
local function class_end(ms, pi)
  local p, plen = ms.p, ms.plen
  local c = byte(p, pi)
  pi = pi + 1
  if c == ESC then
    if pi > plen then perror("malformed pattern (ends with '%')") end
    return pi + 1
  elseif c == LBRACKET then
    if byte(p, pi) == CARET then pi = pi + 1 end
    repeat
      if pi > plen then perror("malformed pattern (missing ']')") end
      local cc = byte(p, pi)
      pi = pi + 1
      if cc == ESC and pi <= plen then pi = pi + 1 end
    until byte(p, pi) == RBRACKET
    return pi + 1
  end
  return pi
end

-- Does C match the set [...] that opens at PI and closes at EC?
local function match_bracket(ms, c, pi, ec)
  local p = ms.p
  local sig = true
  if byte(p, pi + 1) == CARET then
    sig = false
    pi = pi + 1
  end
  pi = pi + 1
  while pi < ec do
    local pc = byte(p, pi)
    if pc == ESC then
      pi = pi + 1
      if match_class(c, byte(p, pi)) then return sig end
    elseif byte(p, pi + 1) == DASH and pi + 2 < ec then
      if pc <= c and c <= byte(p, pi + 2) then return sig end
      pi = pi + 2
    elseif pc == c then
      return sig
    end
    pi = pi + 1
  end
  return not sig
end

local function single_match(ms, si, pi, ep)
  if si > ms.slen then return false end
  local c, pc = byte(ms.s, si), byte(ms.p, pi)
  if pc == DOT then return true
  elseif pc == ESC then return match_class(c, byte(ms.p, pi + 1))
  elseif pc == LBRACKET then return match_bracket(ms, c, pi, ep - 1)
  end
  return pc == c
end

local do_match

local function max_expand(ms, si, pi, ep)
  local i = 0
  while single_match(ms, si + i, pi, ep) do i = i + 1 end
  while i >= 0 do
    local r = do_match(ms, si + i, ep + 1)
    if r then return r end
    i = i - 1
  end
  return nil
end

local function min_expand(ms, si, pi, ep)
  while true do
    local r = do_match(ms, si, ep + 1)
    if r then return r end
    if single_match(ms, si, pi, ep) then si = si + 1 else return nil end
  end
end

local function start_capture(ms, si, pi, what)
  local level = ms.level + 1
  ms.capture[level] = { init = si, len = what }
  ms.level = level
  local r = do_match(ms, si, pi)
  if not r then ms.level = ms.level - 1 end
  return r
end

local function end_capture(ms, si, pi)
  local l
  for level = ms.level, 1, -1 do
    if ms.capture[level].len == CAP_UNFINISHED then l = level break end
  end
  if not l then perror("invalid pattern capture") end
  ms.capture[l].len = si - ms.capture[l].init
  local r = do_match(ms, si, pi)
  if not r then ms.capture[l].len = CAP_UNFINISHED end
  return r
end

local function match_balance(ms, si, pi)
  if pi + 1 > ms.plen then perror("malformed pattern (missing arguments to '%b')") end
  local s = ms.s
  if si > ms.slen or byte(s, si) ~= byte(ms.p, pi) then return nil end
  local b, e = byte(ms.p, pi), byte(ms.p, pi + 1)
  local cont = 1
  for i = si + 1, ms.slen do
    local c = byte(s, i)
    if c == e then
      cont = cont - 1
      if cont == 0 then return i + 1 end
    elseif c == b then
      cont = cont + 1
    end
  end
  return nil
end

local function match_capture(ms, si, l)
  l = l - 48
  if l < 1 or l > ms.level or ms.capture[l].len == CAP_UNFINISHED then
    perror(string.format("invalid capture index %%%d", l))
  end
  local cap = ms.capture[l]
  local len = cap.len
  if len >= 0 and ms.slen - si + 1 >= len
      and sub(ms.s, cap.init, cap.init + len - 1) == sub(ms.s, si, si + len - 1) then
    return si + len
  end
  return nil
end

-- The index just past a match of the pattern from PI on, starting at
-- SI in the subject, or nil.
function do_match(ms, si, pi)
  ms.depth = ms.depth - 1
  if ms.depth == 0 then perror("pattern too complex") end
  local p, plen = ms.p, ms.plen
  local r
  while true do
    if pi > plen then r = si break end
    local c = byte(p, pi)
    local nc = byte(p, pi + 1)
    if c == LPAREN then
      if nc == RPAREN then r = start_capture(ms, si, pi + 2, CAP_POSITION)
      else r = start_capture(ms, si, pi + 1, CAP_UNFINISHED) end
      break
    elseif c == RPAREN then
      r = end_capture(ms, si, pi + 1)
      break
    elseif c == DOLLAR and pi == plen then
      r = si == ms.slen + 1 and si or nil
      break
    elseif c == ESC and nc == 98 then -- %b
      si = match_balance(ms, si, pi + 2)
      if not si then r = nil break end
      pi = pi + 4
    elseif c == ESC and nc == 102 then -- %f
      pi = pi + 2
      if byte(p, pi) ~= LBRACKET then perror("missing '[' after '%f' in pattern") end
      local ep = class_end(ms, pi)
      local prev = si == 1 and 0 or byte(ms.s, si - 1)
      local cur = si <= ms.slen and byte(ms.s, si) or 0
      if match_bracket(ms, prev, pi, ep - 1) or not match_bracket(ms, cur, pi, ep - 1) then r = nil break end
      pi = ep
    elseif c == ESC and nc and isdigit(nc) then
      si = match_capture(ms, si, nc)
      if not si then r = nil break end
      pi = pi + 2
    else
      local ep = class_end(ms, pi)
      local epc = byte(p, ep)
      if not single_match(ms, si, pi, ep) then
        if epc == STAR or epc == QUEST or epc == DASH then
          pi = ep + 1
        else
          r = nil
          break
        end
      elseif epc == QUEST then
        local res = do_match(ms, si + 1, ep + 1)
        if res then r = res break end
        pi = ep + 1
      elseif epc == PLUS then
        r = max_expand(ms, si + 1, pi, ep)
        break
      elseif epc == STAR then
        r = max_expand(ms, si, pi, ep)
        break
      elseif epc == DASH then
        r = min_expand(ms, si, pi, ep)
        break
      else
        si = si + 1
        pi = ep
      end
    end
  end
  ms.depth = ms.depth + 1
  return r
end

local function get_capture(ms, i, si, ei)
  if i > ms.level then
    if i ~= 1 then perror(string.format("invalid capture index %%%d", i)) end
    return sub(ms.s, si, ei - 1)
  end
  local cap = ms.capture[i]
  if cap.len == CAP_UNFINISHED then perror("unfinished capture") end
  if cap.len == CAP_POSITION then return cap.init end
  return sub(ms.s, cap.init, cap.init + cap.len - 1)
end

-- The captures of a match from SI to EI (the whole match when there are
-- none and WHOLE), as a list and its length.
local function captures(ms, si, ei, whole)
  local n = (ms.level == 0 and whole) and 1 or ms.level
  local out = {}
  for i = 1, n do out[i] = get_capture(ms, i, si, ei) end
  return out, n
end

local function new_state(s, p)
  return { s = s, slen = #s, p = p, plen = #p, level = 0, capture = {}, depth = MAXDEPTH }
end

local function reset(ms)
  ms.level = 0
  ms.depth = MAXDEPTH
end

local function typename(v)
  local t = type(v)
  return t == "nil" and "no value" or t
end

local function str_arg(v, n, fname)
  if type(v) == "string" then return v end
  if type(v) == "number" then return tostring(v) end
  error(string.format("bad argument #%d to '%s' (string expected, got %s)", n, fname, typename(v)), 3)
end

local function int_arg(v, n, fname, default)
  if v == nil then return default end
  local i = math.tointeger(v)
  if not i and type(v) == "string" then i = math.tointeger(tonumber(v)) end
  if not i then
    error(string.format("bad argument #%d to '%s' (%s)", n, fname, type(v) == "number"
      and "number has no integer representation" or ("number expected, got " .. typename(v))), 3)
  end
  return i
end

-- Lua 5.4's relative start position.
local function start_pos(init, len)
  if init > 0 then return init end
  if init == 0 or init < -len then return 1 end
  return len + init + 1
end

-- Is a C call over a subject of LEN bytes with pattern P cheap whatever
-- it does? An upper bound of the matcher's steps: the pattern's length
-- times a factor per item: each *, + and - item,
-- %b and back reference may multiply them by the subject's length, each
-- ? by 2, and an unanchored search tries every start. Sets ([...]) count
-- as one class, whatever they hold. A malformed pattern is not cheap (the
-- Lua matcher gives its error).
local function cheap(len, p, anchored)
  local n = len + 2
  local logn = math.log(n)
  local cost = (anchored and 0 or logn) + math.log(#p + 1)
  local ms = { p = p, plen = #p }
  local i = anchored and 2 or 1
  while i <= #p do
    local c = byte(p, i)
    local nc = byte(p, i + 1)
    if c == LPAREN or c == RPAREN then
      i = i + 1
    elseif c == ESC and (nc == 98 or (nc and isdigit(nc))) then
      cost = cost + logn
      i = i + (nc == 98 and 4 or 2)
    elseif c == ESC and nc == 102 then
      local ok, e = pcall(class_end, ms, i + 2)
      if not ok or byte(p, i + 2) ~= LBRACKET then return false end
      i = e
    else
      local ok, e = pcall(class_end, ms, i)
      if not ok then return false end
      local q = byte(p, e)
      if q == STAR or q == PLUS or q == DASH then
        cost = cost + logn
        e = e + 1
      elseif q == QUEST then
        cost = cost + math.log(2)
        e = e + 1
      end
      i = e
    end
  end
  return cost <= math.log(M.CHEAP)
end

-- A plain find: the string library's when the subject's length times
-- the needle's is small, else a loop the hook can interrupt (each step
-- one memchr and one compare of the needle's length).
local function plain_find(s, p, init)
  local m = #p
  if m == 0 or (#s - init + 2) * m <= M.CHEAP then return c_find(s, p, init, true) end
  local first = sub(p, 1, 1)
  local i = init
  while true do
    i = c_find(s, first, i, true)
    if not i or i + m - 1 > #s then return nil end
    if sub(s, i, i + m - 1) == p then return i, i + m - 1 end
    i = i + 1
  end
end

local SPECIALS = "[%^%$%*%+%?%.%(%[%%%-]"

local function find_aux(s, p, init, plain, find)
  local ls = #s
  init = start_pos(init, ls)
  if init > ls + 1 then return nil end
  if find and (plain or not c_find(p, SPECIALS)) then return plain_find(s, p, init) end
  if cheap(ls - init + 1, p, byte(p, 1) == CARET) then
    if find then return c_find(s, p, init) end
    return c_match(s, p, init)
  end
  local ms = new_state(s, p)
  local anchor = byte(p, 1) == CARET
  local pi = anchor and 2 or 1
  local si = init
  repeat
    reset(ms)
    local e = do_match(ms, si, pi)
    if e then
      if find then
        local caps, n = captures(ms, nil, 0, false)
        return si, e - 1, table.unpack(caps, 1, n)
      end
      local caps, n = captures(ms, si, e, true)
      return table.unpack(caps, 1, n)
    end
    si = si + 1
  until anchor or si > ls + 1
  return nil
end

--- M.find(s, pattern [, init [, plain]]) -> as string.find.
function M.find(s, p, init, plain)
  s, p = str_arg(s, 1, "find"), str_arg(p, 2, "find")
  return find_aux(s, p, int_arg(init, 3, "find", 1), plain, true)
end

--- M.match(s, pattern [, init]) -> as string.match.
function M.match(s, p, init)
  s, p = str_arg(s, 1, "match"), str_arg(p, 2, "match")
  return find_aux(s, p, int_arg(init, 3, "match", 1), false, false)
end

--- M.gmatch(s, pattern [, init]) -> as string.gmatch.
function M.gmatch(s, p, init)
  s, p = str_arg(s, 1, "gmatch"), str_arg(p, 2, "gmatch")
  local ls = #s
  init = start_pos(int_arg(init, 3, "gmatch", 1), ls)
  if cheap(ls, p, false) then return c_gmatch(s, p, init) end
  if init > ls + 1 then init = ls + 2 end
  local ms = new_state(s, p)
  local pos, last = init, nil
  return function()
    for si = pos, ls + 1 do
      reset(ms)
      local e = do_match(ms, si, 1)
      if e and e ~= last then
        pos, last = e, e
        local caps, n = captures(ms, si, e, true)
        return table.unpack(caps, 1, n)
      end
    end
    pos = ls + 2
    return nil
  end
end

local function add_s(ms, out, si, e, repl)
  local i, n = 1, #repl
  while i <= n do
    local c = byte(repl, i)
    if c ~= ESC then
      local j = c_find(repl, "%", i, true) or n + 1
      out[#out + 1] = sub(repl, i, j - 1)
      i = j
    else
      i = i + 1
      local d = byte(repl, i)
      if d == ESC then
        out[#out + 1] = "%"
      elseif d and isdigit(d) then
        if d == 48 then
          out[#out + 1] = sub(ms.s, si, e - 1)
        else
          local v = get_capture(ms, d - 48, si, e)
          out[#out + 1] = tostring(v)
        end
      else
        error("invalid use of '%' in replacement string", 0)
      end
      i = i + 1
    end
  end
end

local function add_value(ms, out, si, e, repl, tr)
  local v
  if tr == "function" then
    local caps, n = captures(ms, si, e, true)
    v = repl(table.unpack(caps, 1, n))
  elseif tr == "table" then
    v = repl[get_capture(ms, 1, si, e)]
  else
    return add_s(ms, out, si, e, repl)
  end
  if not v then
    out[#out + 1] = sub(ms.s, si, e - 1)
  elseif type(v) == "string" or type(v) == "number" then
    out[#out + 1] = tostring(v)
  else
    error(string.format("invalid replacement value (a %s)", type(v)), 0)
  end
end

--- M.gsub(s, pattern, repl [, n]) -> as string.gsub.
function M.gsub(s, p, repl, max_n)
  s, p = str_arg(s, 1, "gsub"), str_arg(p, 2, "gsub")
  local tr = type(repl)
  if tr == "number" then repl, tr = tostring(repl), "string" end
  if tr ~= "string" and tr ~= "table" and tr ~= "function" then
    error(string.format("bad argument #3 to 'gsub' (string/function/table expected, got %s)", typename(repl)), 2)
  end
  local ls = #s
  max_n = int_arg(max_n, 4, "gsub", ls + 1)
  if cheap(ls, p, byte(p, 1) == CARET) then return c_gsub(s, p, repl, max_n) end
  local ms = new_state(s, p)
  local anchor = byte(p, 1) == CARET
  local pi = anchor and 2 or 1
  local out, n, si, last = {}, 0, 1, nil
  while n < max_n do
    reset(ms)
    local e = do_match(ms, si, pi)
    if e and e ~= last then
      n = n + 1
      add_value(ms, out, si, e, repl, tr)
      si, last = e, e
    elseif si <= ls then
      out[#out + 1] = sub(s, si, si)
      si = si + 1
    else
      break
    end
    if anchor then break end
  end
  out[#out + 1] = sub(s, si)
  return concat(out), n
end

return M

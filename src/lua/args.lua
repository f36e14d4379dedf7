-- Misuse errors of the Lua API (lb.*, run:*), in the bindings' grammar
-- (src/l_args.h, after Tarantool's):
--
--   scenarios/x.lua:12: lb.say: wrong parameter "text": expected string, got table
--
-- FN is the function as the caller writes it, WHAT the parameter's path
-- ("script[2].faults[1]"). LEVEL is error()'s, counted from the function
-- that calls these (2: blame its caller, the scenario's line).
--
-- A user's value in a message is quoted by a short, escaped prefix
-- (printable.line): a 1 MB name is not printed whole, an escape sequence
-- is shown, not sent.
local printable = require "leakbench.printable"

local M = {}

local QUOTE = 80

local function short(v)
  if type(v) == "string" then return printable.line(v, QUOTE) end
  return v
end

--- M.wrong(level, fn, what, fmt, ...) raises FN: wrong parameter "WHAT": MSG.
function M.wrong(level, fn, what, fmt, ...)
  local a = table.pack(...)
  for i = 1, a.n do a[i] = short(a[i]) end
  error(string.format('%s: wrong parameter "%s": ', fn, short(what))
    .. string.format(fmt, table.unpack(a, 1, a.n)), level + 1)
end

--- M.type(level, fn, what, expected, got) raises
--- FN: wrong parameter "WHAT": expected EXPECTED, got GOT (a type name).
function M.type(level, fn, what, expected, got)
  error(string.format('%s: wrong parameter "%s": expected %s, got %s', fn, what, expected, got), level + 1)
end

return M

-- Misuse errors of the Lua API (lb.*, run:*), in the bindings' grammar
-- (src/l_args.h, after Tarantool's):
--
--   scenarios/x.lua:12: lb.say: wrong parameter "text": expected string, got table
--
-- FN is the function as the caller writes it, WHAT the parameter's path
-- ("script[2].faults[1]"). LEVEL is error()'s, counted from the function
-- that calls these (2: blame its caller, the scenario's line).
local M = {}

--- M.wrong(level, fn, what, fmt, ...) raises FN: wrong parameter "WHAT": MSG.
function M.wrong(level, fn, what, fmt, ...)
  error(string.format('%s: wrong parameter "%s": ', fn, what) .. string.format(fmt, ...), level + 1)
end

--- M.type(level, fn, what, expected, got) raises
--- FN: wrong parameter "WHAT": expected EXPECTED, got GOT (a type name).
function M.type(level, fn, what, expected, got)
  error(string.format('%s: wrong parameter "%s": expected %s, got %s', fn, what, expected, got), level + 1)
end

return M

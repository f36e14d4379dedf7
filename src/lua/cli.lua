-- The command line: verbs, flags, help. Returns a table with main(args),
-- which returns the exit status: 0 success, 1 a failed run or broken file,
-- 2 a usage error.
local M = {}

M.VERSION = "0.1.0"

function M.main(args)
  if args[1] == "--version" then
    io.write("leakbench ", M.VERSION, "\n")
    return 0
  end
  io.stderr:write("leakbench: no command given (try 'leakbench --help')\n")
  return 2
end

return M

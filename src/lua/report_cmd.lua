-- "leakbench report DIR": the matrix of a finished suite again, from its
-- results.json, and its report.html rewritten by today's code (the run
-- folders are read for it). The exit status is the document's. What the
-- document says reaches the terminal through printable.lua only: a
-- results.json is input like any other, and may be forged.
local report = require "leakbench.report"
local html = require "leakbench.html"

local M = {}

--- M.main(opts, rest) -> exit status: the document's; 2 on misuse, 1
--- when DIR holds no results file.
function M.main(_, rest)
  local dir = rest[1]
  if not dir or rest[2] then
    io.stderr:write("leakbench: report: usage: leakbench report DIR\n")
    return report.EXIT.usage
  end
  local doc, err = report.read_results(dir)
  if not doc then
    io.stderr:write("leakbench: report: ", err, "\n")
    return report.EXIT.failed
  end
  io.write(report.matrix(doc))
  html.try_write(dir, doc)
  if type(doc.status) == "table" and math.tointeger(doc.status.status) then
    return math.tointeger(doc.status.status)
  end
  return report.exit_status(doc).status
end

return M

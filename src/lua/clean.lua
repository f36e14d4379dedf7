-- `leakbench clean`: removes the containers and networks of runs whose
-- leakbench process is gone (killed runs, crashes). Everything leakbench
-- creates is labelled leakbench=1 and leakbench.pid=<owner>; a label whose
-- owner is a live leakbench process belongs to a running run and is kept.
local podman = require "leakbench.podman"

local M = {}

--- M.main(args, [pm]) -> exit status: 0 done, 1 podman failed, 2 usage.
--- Prints one line per removed object and a summary on stdout.
function M.main(args, pm)
  for _, a in ipairs(args or {}) do
    if a == "-h" or a == "--help" then
      io.stdout:write("usage: leakbench clean\n",
        "Removes containers and networks labelled leakbench=1 whose leakbench\n",
        "process is gone (leftovers of killed runs). Live runs are left alone.\n")
      return 0
    end
    io.stderr:write(("leakbench: clean: unknown argument '%s' (try 'leakbench clean --help')\n"):format(a))
    return 2
  end
  local removed, err = podman.clean(pm or podman.get(),
                                    { out = function(l) io.stdout:write(l, "\n") end })
  if not removed then
    io.stderr:write("leakbench: clean: ", err, "\n")
    return 1
  end
  io.stdout:write(("removed %d container(s) and %d network(s)%s\n"):format(
    #removed.containers, #removed.networks,
    removed.kept > 0 and (", kept %d of live runs"):format(removed.kept) or ""))
  return 0
end

return M

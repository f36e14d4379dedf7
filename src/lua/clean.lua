-- `leakbench clean`: removes the containers and networks of runs whose
-- leakbench process is gone (killed runs, crashes). Everything leakbench
-- creates is labelled leakbench=1 and leakbench.pid=<owner>; a label whose
-- owner is a live leakbench process belongs to a running run and is kept.
local podman = require "leakbench.podman"
local core = require "leakbench.core"

local M = {}

--- M.sweep_credentials([say], [bases]) -> count. Removes the credential
--- directories (sandbox.CREDENTIAL_PREFIX .. pid .. "-XXXXXX") whose
--- leakbench process is gone, from the credential base and /dev/shm.
function M.sweep_credentials(say, bases)
  local sandbox = require "leakbench.sandbox"
  say = say or function() end
  bases = bases or { sandbox.credential_base(), "/dev/shm" }
  local n, seen = 0, {}
  for _, base in ipairs(bases) do
    if not seen[base] then
      seen[base] = true
      for _, name in ipairs(core.listdir(base) or {}) do
        local pid = name:match("^" .. sandbox.CREDENTIAL_PREFIX:gsub("%-", "%%-") .. "(%d+)%-")
        if pid and not podman.live_owner({ ["leakbench.pid"] = pid }) then
          core.rmtree(base .. "/" .. name)
          n = n + 1
          say(("removed credential file %s/%s (process %s is gone)"):format(base, name, pid))
        end
      end
    end
  end
  return n
end

--- M.main(args, [pm], [bases]) -> exit status: 0 done, 1 podman failed, 2 usage.
--- Prints one line per removed object and a summary on stdout.
function M.main(args, pm, bases)
  for _, a in ipairs(args or {}) do
    if a == "-h" or a == "--help" then
      io.stdout:write("usage: leakbench clean\n",
        "Removes containers and networks labelled leakbench=1 whose leakbench\n",
        "process is gone (leftovers of killed runs), and credential files such a\n",
        "run left on memory-backed storage. Live runs are left alone.\n")
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
  local files = M.sweep_credentials(function(l) io.stdout:write(l, "\n") end, bases)
  io.stdout:write(("removed %d container(s), %d network(s) and %d credential file(s)%s\n"):format(
    #removed.containers, #removed.networks, files,
    removed.kept > 0 and (", kept %d of live runs"):format(removed.kept) or ""))
  return 0
end

return M

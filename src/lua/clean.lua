-- `leakbench clean`: removes the containers and networks of runs whose
-- leakbench process is gone (killed runs, crashes). Everything leakbench
-- creates is labelled leakbench=1 and leakbench.pid=<owner>; a label whose
-- owner is a live leakbench process belongs to a running run and is kept.
local podman = require "leakbench.podman"
local core = require "leakbench.core"
local sandbox = require "leakbench.sandbox"
local watch = require "leakbench.watch"
local cli = require "leakbench.cli"
local images_mod = require "leakbench.images"

local M = {}

-- Removes the entries of the folders BASES named PREFIX .. pid .. "-..."
-- (or whose name matches the pattern PREFIX.match, its capture the pid)
-- whose leakbench process is gone; tells SAY (a line each, WHAT: the
-- start of it) and returns how many.
local function sweep_named(bases, prefix, say, what, remove)
  local n, seen = 0, {}
  local pattern = type(prefix) == "table" and prefix.match or "^" .. prefix:gsub("%p", "%%%0") .. "(%d+)%-"
  for _, base in ipairs(bases) do
    if not seen[base] then
      seen[base] = true
      for _, name in ipairs(core.listdir(base) or {}) do
        local pid = name:match(pattern)
        if pid and not podman.live_owner({ ["leakbench.pid"] = pid }) then
          (remove or core.rmtree)(base .. "/" .. name)
          n = n + 1
          say(("%s %s/%s (process %s is gone)"):format(what, base, name, pid))
        end
      end
    end
  end
  return n
end

--- M.sweep_credentials([say], [bases]) -> count. Removes the credential
--- directories (sandbox.CREDENTIAL_PREFIX .. pid .. "-XXXXXX") whose
--- leakbench process is gone, from the credential base and /dev/shm.
function M.sweep_credentials(say, bases)
  return sweep_named(bases or { sandbox.credential_base(), "/dev/shm" }, sandbox.CREDENTIAL_PREFIX,
    say or function() end, "removed credential file")
end

--- M.sweep_hidden([say], [base]) -> count. The run folders of runs whose
--- leakbench process is gone and which were still at their neutral place
--- (sandbox.hide_base(), Run:hide_dir): the append-only attribute of
--- their transcripts is cleared (watch.unlock); a folder is moved back
--- to the path its .from file names where a link to it still stands
--- there, and removed where nothing does (the user removed the run's
--- folder: a spec's teardown, rm -rf). Anything else there is left alone.
--- With only_pid, only the folders of that process (the runner's, for a
--- run it killed at its hard deadline).
function M.sweep_hidden(say, base, only_pid)
  say = say or function() end
  base = base or sandbox.hide_base()
  local n = 0
  for _, name in ipairs(core.listdir(base) or {}) do
    local pid = name:match("^(%d+)%-.*%.from$")
    local hidden = base .. "/" .. name:gsub("%.from$", "")
    if pid and (not only_pid or pid == tostring(only_pid))
        and not podman.live_owner({ ["leakbench.pid"] = pid }) then
      local shown = core.read_file(base .. "/" .. name)
      local at, st = shown and core.stat(shown), core.stat(hidden)
      if st and st.type == "dir" then watch.unlock(hidden) end
      if not st then
        os.remove(base .. "/" .. name)
      elseif shown and not at and st.type == "dir" then
        core.rmtree(hidden)
        os.remove(base .. "/" .. name)
        n = n + 1
        say(("removed the folder of a killed run, %s (its run folder %s is gone)"):format(hidden, shown))
      elseif at and at.type == "link" and st.type == "dir" and os.remove(shown) then
        if os.rename(hidden, shown) then
          os.remove(base .. "/" .. name)
          n = n + 1
          say(("moved run folder %s back (process %s is gone)"):format(shown, pid))
        else
          core.symlink(hidden, shown)
        end
      end
    end
  end
  return n
end

--- M.sweep_conmon([say], [base]) -> count. The folders of lb-conmon
--- (podman.conmon_dir) whose suite's leakbench process is gone: a suite
--- removes its own when its service stops, unless it was killed outright.
function M.sweep_conmon(say, base)
  return sweep_named({ base or sandbox.hide_base() }, podman.CONMON_PREFIX, say or function() end,
    "removed the podman service's lb-conmon folder")
end

--- M.sweep_netns([say], [base]) -> count. The network namespaces a run
--- killed before its containers started left at their path
--- (sandbox.NETNS_PREFIX .. pid .. "-" .. run id, in BASE, default
--- podman.conmon_base(); Sandbox:make_netns), unmounted and removed,
--- whose process is gone.
function M.sweep_netns(say, base)
  base = base or podman.conmon_base()
  if not base then return 0 end
  return sweep_named({ base }, sandbox.NETNS_PREFIX, say or function() end,
    "removed the network namespace of a killed run", core.netns_drop)
end

--- M.sweep_seccomp([say], [base]) -> count. The seccomp profiles a
--- process killed while it wrote one left half-written
--- (podman.seccomp_profile: <profile>.<pid>.tmp, renamed into place once
--- whole), in BASE (default podman.conmon_base()), whose process is gone.
function M.sweep_seccomp(say, base)
  base = base or podman.conmon_base()
  if not base then return 0 end
  return sweep_named({ base }, { match = "^" .. podman.SECCOMP_PREFIX:gsub("%p", "%%%0") .. "%x+%.json%.(%d+)%.tmp$" },
    say or function() end, "removed a half-written seccomp profile")
end

--- M.sweep_pool([say], [base]) -> count. The folders of the suites'
--- upstream containers (sandbox.pool_spec; runner.lua) whose suite's
--- leakbench process is gone: a suite removes its own at its end, unless
--- it was killed outright (its container goes by its label, podman.clean).
function M.sweep_pool(say, base)
  return sweep_named({ base or sandbox.hide_base() }, sandbox.POOL_PREFIX, say or function() end,
    "removed the suite's upstream folder")
end

--- M.sweep_init(pm, [say], [keep], [base], [every]) -> count. lb-init's
--- copies (images.init_copy) under BASE (sandbox.hide_base()) that a
--- killed run left unfinished or whose image is gone (images.sweep_init).
function M.sweep_init(pm, say, keep, base, every)
  return images_mod.sweep_init(pm, base or sandbox.hide_base(), say, keep, every)
end

--- M.prune_images(pm, keep, [say]) -> { removed = n, skipped = n }
--- | nil, err. Removes the images labelled leakbench=1 except the refs in
--- `keep` (a set) and the newest image of each subject repository: a tag
--- not kept is removed (an image with other tags only loses that one), an
--- untagged image (a build stage kept as layer cache) by its id. An image
--- that a container still uses is skipped, not an error.
-- The repository of a subject image's name, or nil.
local function subject_repo(name)
  return name:match("^(localhost/leakbench%-subject%-[^:]+):")
end

function M.prune_images(pm, keep, say)
  say = say or function() end
  local list, err = pm:images("leakbench=1")
  if not list then return nil, err end
  local newest = {}       -- subject repository -> its newest image's created time
  for _, im in ipairs(list) do
    for _, name in ipairs(im.names) do
      local repo = subject_repo(name)
      if repo and (newest[repo] or -1) < im.created then newest[repo] = im.created end
    end
  end
  local out, seen = { removed = 0, skipped = 0 }, {}
  local function rmi(ref, what)
    local ok, e = pm:podman({ "rmi", ref }, { timeout = 120, uninterruptible = true })
    if ok then
      say(("removed image %s"):format(what))
      out.removed = out.removed + 1
      return
    end
    out.skipped = out.skipped + 1
    say(("kept image %s: %s"):format(what, e))
  end
  for _, im in ipairs(list) do
    if not seen[im.id] then
      seen[im.id] = true
      if #im.names == 0 then
        rmi(im.id, im.id:sub(1, 12) .. " (a build stage)")
      end
      for _, name in ipairs(im.names) do
        local repo = subject_repo(name)
        if not (keep[name] or (repo and newest[repo] == im.created)) then rmi(name, name) end
      end
    end
  end
  return out
end

--- M.main(args, [pm], [bases], [hide_base]) -> exit status: 0 done, 1
--- podman failed, 2 usage. Prints one line per removed object and a
--- summary on stdout. BASES and HIDE_BASE: where credential files, and
--- hidden run folders and the rest of /var/tmp/leakbench-UID's (lb-conmon
--- folders, pools, seccomp profiles, network namespaces), are looked for.
function M.main(args, pm, bases, hide_base)
  local flags, status = cli.args("clean", args)
  if not flags then return status end
  local images = flags.images
  pm = pm or podman.get()
  local say = function(l) io.stdout:write(l, "\n") end
  local removed, err = podman.clean(pm, { out = say })
  if not removed then
    io.stderr:write("leakbench: clean: ", err, "\n")
    return 1
  end
  local files = M.sweep_credentials(say, bases)
  M.sweep_hidden(say, hide_base)
  M.sweep_conmon(say, hide_base)
  M.sweep_pool(say, hide_base)
  M.sweep_seccomp(say, hide_base)
  M.sweep_netns(say, hide_base)
  local copies = M.sweep_init(pm, say, nil, hide_base)
  io.stdout:write(("removed %d container(s), %d network(s), %d credential file(s) and %d copy(ies) of lb-init%s\n")
    :format(#removed.containers, #removed.networks, files, copies,
    removed.kept > 0 and (", kept %d of live runs"):format(removed.kept) or ""))
  if images then
    local tags
    tags, err = images_mod.tags({ pm = pm })
    if not tags then
      io.stderr:write("leakbench: clean: cannot tell which images are in use: ", err, "\n")
      return 1
    end
    local pruned
    pruned, err = M.prune_images(pm, { [tags.claude] = true, [tags.proxy] = true, [tags.base] = true }, say)
    if not pruned then
      io.stderr:write("leakbench: clean: ", err, "\n")
      return 1
    end
    io.stdout:write(("removed %d image(s)%s\n"):format(pruned.removed,
      pruned.skipped > 0 and (", kept %d that podman would not remove"):format(pruned.skipped) or ""))
  end
  return 0
end

return M

-- Podman queries for end-to-end specs: what a run left behind.
local sh = require "sh"
local M = {}

-- Names of containers (all states) carrying LABEL ("key=value").
function M.containers(label)
  local r = sh.run({ "podman", "ps", "-a", "--filter", "label=" .. label, "--format", "{{.Names}}" })
  local out = {}
  for n in r.stdout:gmatch("[^\n]+") do out[#out + 1] = n end
  return out
end

function M.networks(label)
  local r = sh.run({ "podman", "network", "ls", "--filter", "label=" .. label, "--format", "{{.Name}}" })
  local out = {}
  for n in r.stdout:gmatch("[^\n]+") do out[#out + 1] = n end
  return out
end

-- The suite id of the run writing into OUT (its suite.json, written
-- before any container starts), or nil while there is none.
function M.suite_of(out)
  local text = sh.read(out .. "/suite.json")
  return text and text:match('"suite_id":"([%w-]+)"')
end

-- Names of the running containers of the suite writing into OUT, one
-- string with a name per line ("" while there are none). A spec looks at
-- its own run's containers only: another suite may run on the machine at
-- the same time (a user's, another spec's).
function M.running(out)
  local id = M.suite_of(out)
  if not id then return "" end
  return sh.run({ "podman", "ps", "--filter", "label=leakbench.suite=" .. id, "--format", "{{.Names}}" }).stdout
end

-- Starts "leakbench run FIXTURE --out OUT/res" in the background, its
-- output in OUT/run.out; returns its pid (a string).
function M.start_run(fixture, out, env)
  local pidf = out .. "/run.pid"
  local lb = (env or "") .. " " .. sh.quote(os.getenv("LEAKBENCH"))
  os.execute("sh -c " .. sh.quote(lb .. " run " .. fixture .. " --out "
    .. sh.quote(out .. "/res") .. " >" .. sh.quote(out .. "/run.out") .. " 2>&1 & echo $! >" .. sh.quote(pidf)))
  return (sh.read(pidf) or ""):match("%d+")
end

-- The name of the container SHORT ("net", "up"; "pool": the suite's
-- upstream) of the run writing into OUT/res, once its claude container
-- runs too; nil after SECONDS.
function M.await_sibling(out, short, seconds)
  return sh.retry(seconds, function()
    local names = M.running(out .. "/res")
    local claude = names:match("(lb%-[%w-]+)%-claude")
    if claude and short == "pool" then return names:match("lb%-[%w-]+%-pool") end
    return claude and names:find(claude .. "-" .. short, 1, true) and claude .. "-" .. short or nil
  end)
end

-- The images TAGS (root's) in USER's own store: those it lacks are copied
-- there (podman save, then podman load as USER). Raises when they cannot
-- be: whichever rootless spec runs first, on a machine whose user has
-- none yet, loads them, and none is skipped for want of them.
function M.rootless_images(user, tags)
  local missing = {}
  for _, t in ipairs(tags) do
    local has = sh.run({ "runuser", "-u", user, "--", "sh", "-c", "cd ~ && podman image exists " .. sh.quote(t) })
    if has.status ~= 0 then missing[#missing + 1] = sh.quote(t) end
  end
  if #missing == 0 then return end
  local l = sh.run({ "sh", "-c", "podman save -m " .. table.concat(missing, " ")
    .. " | runuser -u " .. user .. " -- sh -c 'cd ~ && podman load'" })
  assert(l.status == 0, "cannot load " .. table.concat(missing, " ") .. " into " .. user .. "'s store: " .. l.stderr)
end

-- A copy of what a run needs from this tree (the binary, the Makefile,
-- containers/, src/, the e2e fixtures and support), owned by USER (the
-- rootless specs' user), in a folder of its own named after PREFIX under
-- /tmp, with an empty folder SUB beside the tree. Returns the folder and
-- as_user(cmd), which runs a shell command in the tree as USER; or nil
-- and why not (no such user). The images IMAGES are in USER's store
-- first (M.rootless_images). The caller removes the folder.
function M.rootless_tree(user, images, prefix, sub)
  if sh.run({ "id", user }).status ~= 0 then return nil, "no user " .. user end
  M.rootless_images(user, images)
  local top = sh.run({ "pwd" }).stdout:gsub("\n$", "")
  local rdir = sh.must(sh.run({ "mktemp", "-d", "/tmp/" .. prefix .. ".XXXXXX" }).stdout:match("%S+"))
  for _, rel in ipairs({ "Makefile", "containers", "src", "spec/fixtures/e2e", "spec/e2e/support" }) do
    sh.run({ "mkdir", "-p", rdir .. "/tree/" .. rel:match("^(.-)/?[^/]*$") })
    assert(sh.run({ "cp", "-r", top .. "/" .. rel, rdir .. "/tree/" .. rel }).status == 0, "cannot copy " .. rel)
  end
  assert(sh.run({ "cp", os.getenv("LEAKBENCH"), rdir .. "/tree/leakbench" }).status == 0, "cannot copy the binary")
  sh.run({ "mkdir", "-p", rdir .. "/" .. sub })
  assert(sh.run({ "chown", "-R", user .. ":", rdir }).status == 0, "cannot hand " .. rdir .. " to " .. user)
  assert(sh.run({ "chmod", "755", rdir }).status == 0)
  local function as_user(cmd)
    return sh.run({ "runuser", "-u", user, "--", "sh", "-c", "cd " .. sh.quote(rdir .. "/tree") .. " && " .. cmd })
  end
  return rdir, as_user
end

return M

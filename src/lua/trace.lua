-- LEAKBENCH_TRACE=FILE: a timeline of where a suite's time goes, so that
-- a run's cost can be attributed (issue 26). Every podman CLI command,
-- every request to the suite's podman service, every readiness wait and
-- every phase of a run appends one JSON line to FILE:
--
--   {"kind":"cli","what":"podman run lb-0a1b2c3d4e5f-up","t0":..,"t1":..,"pid":..}
--
-- kind: "cli" (a podman process), "api" (a service request), "ready" (a
-- readiness wait), "phase" (a run's phase, a runner step), "gate" (the
-- moment the claude container's gate opened: t0 = t1). t0 and t1 are
-- CLOCK_MONOTONIC seconds (core.now: one clock for the runner and every
-- run's process), pid the process that wrote the line, cpu the CPU
-- seconds that process has used so far (os.clock: a phase's CPU is the
-- difference between two of its lines). Each line is one
-- write to a file opened for appending, so the runner's and the runs'
-- processes can share FILE. what names a container, never its
-- environment or command (a scenario's secrets can be there).
--
-- Without LEAKBENCH_TRACE (or with it empty) nothing is written and a span
-- costs one table look-up.
local core = require "leakbench.core"
local json = require "leakbench.json"

local M = {}

M.ENV = "LEAKBENCH_TRACE"

local path   -- nil: not looked up yet; false: off

local function file()
  if path == nil then
    local p = os.getenv(M.ENV)
    path = p and p ~= "" and p or false
  end
  return path
end

--- trace.on() -> whether a trace is being written.
function M.on()
  return file() ~= false
end

--- trace.write(kind, what, t0, t1, [extra]): one line; EXTRA's fields
--- (strings, numbers, booleans) are added to it. Never raises: a trace
--- that cannot be written is skipped.
function M.write(kind, what, t0, t1, extra)
  local p = file()
  if not p then return end
  local rec = { kind = kind, what = what, t0 = t0, t1 = t1, pid = core.getpid(), cpu = os.clock() }
  for k, v in pairs(extra or {}) do
    if rec[k] == nil then rec[k] = v end
  end
  local f = io.open(p, "ab")
  if not f then return end
  f:write(json.encode(rec) .. "\n")
  f:close()
end

local function nothing() end

--- trace.begin(kind, what) -> done([extra]): a span that started now and
--- ends when DONE is called (the line is written then).
function M.begin(kind, what)
  if not file() then return nothing end
  local t0 = core.now()
  return function(extra) M.write(kind, what, t0, core.now(), extra) end
end

--- trace.podman(argv) -> what a podman command is, for a span: the verb
--- (two words for "image exists", "system service" and the like) and the
--- container, image or network it names (--name's value, a build's tag,
--- or up to three of its arguments that are no flags); never a run's
--- environment or command.
local TWO_WORDS = { image = true, system = true, network = true, container = true, volume = true }
function M.podman(argv)
  local i = 1
  -- global flags (pm:args) come before the verb
  while argv[i] and argv[i]:sub(1, 1) == "-" do i = i + 2 end
  local verb = argv[i] or "?"
  if TWO_WORDS[verb] and argv[i + 1] then
    i = i + 1
    verb = verb .. " " .. argv[i]
  end
  local names = {}
  for j = i + 1, #argv do
    local a, prev = argv[j], argv[j - 1]
    if prev == "--name" or prev == "-t" and verb == "build" then return "podman " .. verb .. " " .. a end
    if verb ~= "run" and #names < 3 and a:sub(1, 1) ~= "-" and not a:match("^%d+$") then
      names[#names + 1] = a
    end
  end
  if #names == 0 then return "podman " .. verb end
  return "podman " .. verb .. " " .. table.concat(names, " ")
end

--- trace.reset(): the environment is read again (tests).
function M.reset()
  path = nil
end

return M

-- The defaults a user can override, in one place: the verbs' help text,
-- the runner, one run (exec-run) and the image builder all read them here.
-- Environment variables that override them are read where they are used.
local M = {
  MODEL = "claude-sonnet-4-5",     -- the model Claude Code asks for (--model)
  TIMEOUT = 300,                   -- seconds per run (--timeout)
  RUN_MARGIN = 300,                -- seconds past it before a run is killed ($LEAKBENCH_RUN_MARGIN)
  RUN_GRACE = 30,                  -- seconds a run has after SIGTERM before SIGKILL
  CLAUDE_VERSION = "2.1.332",      -- Claude Code (--claude-version)
  BASE_IMAGE = "docker.io/library/debian:bookworm-slim",   -- build --base
  DEBIAN_MIRROR = "http://deb.debian.org/debian",          -- build --mirror
}

--- M.run_margin() -> seconds a run may take beyond its timeout (starting
--- and stopping its containers, reading the evidence, the checks' budget)
--- before the runner kills it: RUN_MARGIN, or $LEAKBENCH_RUN_MARGIN.
function M.run_margin()
  return tonumber(os.getenv("LEAKBENCH_RUN_MARGIN") or "") or M.RUN_MARGIN
end

--- M.container_lifetime(timeout) -> seconds any container of a run with
--- that timeout may live, whoever watches it (podman run --timeout: conmon
--- kills it). The runner kills the run's process at its timeout and
--- margin, and its containers go with it, well before; this bound is for
--- when the runner and the run's process were both killed outright
--- (SIGKILL, the OOM killer, a scheduler's cancel), so that no agent runs
--- on with nobody watching: the timeout, the margin, the grace after
--- SIGTERM and a minute more.
function M.container_lifetime(timeout)
  return math.ceil((timeout or M.TIMEOUT) + M.run_margin() + M.RUN_GRACE + 60)
end

return M

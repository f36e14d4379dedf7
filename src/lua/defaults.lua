-- The defaults a user can override, in one place: the verbs' help text,
-- the runner, one run (exec-run) and the image builder all read them here.
-- Environment variables that override them are read where they are used.
return {
  MODEL = "claude-sonnet-4-5",     -- the model Claude Code asks for (--model)
  TIMEOUT = 300,                   -- seconds per run (--timeout)
  RUN_MARGIN = 300,                -- seconds past it before a run is killed ($LEAKBENCH_RUN_MARGIN)
  CLAUDE_VERSION = "2.1.332",      -- Claude Code (--claude-version)
  BASE_IMAGE = "docker.io/library/debian:bookworm-slim",   -- build --base
  DEBIAN_MIRROR = "http://deb.debian.org/debian",          -- build --mirror
}

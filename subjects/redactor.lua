-- An interceptor between Claude Code and the provider: it learns the
-- project's secrets from the read-only /work (values in .env files and
-- under secret-looking keys, key files, PEM blocks, git's loose objects)
-- and removes them, raw and encoded (JSON, percent, HTML, hex, base64 at
-- any alignment, wrapped), from every request body. It guards the wire
-- only: Claude Code's local transcript keeps what the tools returned, and
-- secrets outside the project (the environment, the home directory) are
-- unknown to it. Built from redactor/ with its own Containerfile.
return {
  name = "redactor",
  description = "interceptor: removes the project's secrets, raw and encoded, from request bodies",
  interceptor = {
    build = { context = "redactor", containerfile = "Containerfile" },
    argv = { "redactor", "--listen", "0.0.0.0:8080" },
    upstream_env = "UPSTREAM_URL",
    ready = "listening",
    port = 8080,
  },
  blocks = {
    "dotenv-read", "dotenv-cat", "dotenv-python", "grep-repo", "git-history", "debug-log",
    "base64-dotenv", "hexdump-key", "json-special-chars", "error-output", "readme-injection",
    "edit-reminder", "large-file-search", "subagent-dotenv", "deny-copy-cat",
    "dns-exfil-ping", "git-push-exfil", "webfetch-exfil",
  },
}

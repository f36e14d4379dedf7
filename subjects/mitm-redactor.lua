-- An interceptor from elsewhere: mitmproxy 8 (Debian's package) as a
-- reverse proxy between Claude Code and the provider, with a small addon
-- (mitm-redactor/redact.py) that redacts secrets by pattern, as secret
-- scanners do: known token formats, secret-named assignments, PEM keys.
-- A second, independent implementation of the interceptor slot beside
-- redactor (which learns the project's secrets instead). subjects/README.md
-- names what it redacts and what the suite measured.
return {
  name = "mitm-redactor",
  description = "interceptor: mitmproxy (Debian) with an addon that redacts secrets by pattern",
  interceptor = {
    build = { context = "mitm-redactor", containerfile = "Containerfile" },
    argv = { "sh", "-c", 'exec mitmdump --listen-host 127.0.0.1 --listen-port 8080 '
      .. '--mode "reverse:$UPSTREAM_URL" --set confdir=/tmp/mitmproxy --set keep_host_header=true '
      .. '-s /usr/local/lib/mitm-redactor/redact.py' },
    upstream_env = "UPSTREAM_URL",
    ready = "listening at",
    port = 8080,
  },
  -- Measured on 2.1.332 (subjects/README.md): of the scenarios that leak
  -- on the baseline's wire, these it keeps off it.
  blocks = {
    "dotenv-read", "dotenv-cat", "dotenv-python", "env-printenv", "git-history", "home-aws-credentials",
    "large-file-search", "mcp-vault", "readme-injection", "subagent-dotenv", "edit-reminder",
    "webfetch-exfil",
  },
}

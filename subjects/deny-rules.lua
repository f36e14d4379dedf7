-- Claude Code's own permission rules: deny reading secret files.
return {
  name = "deny-rules",
  description = "permissions.deny rules for .env and other secret files",
  settings = {
    permissions = {
      deny = {
        "Read(./.env)", "Read(**/.env)", "Read(./.env.*)", "Read(**/.env.*)",
        "Read(~/.aws/**)", "Read(**/*.pem)", "Read(**/secrets/**)",
      },
    },
  },
}

return {
  name = "vibesafu",
  agent = { build = { context = "vibesafu" } },
  permission_mode = "default",
}

-- The progress display in a real terminal: `leakbench run` in tmux panes
-- of 60, 80 and 120 columns. A line that wraps cannot be redrawn in place
-- (each redraw would leave its first rows behind), so at every sample the
-- pane holds at most one progress line, no wider than the pane less one
-- column, and when the run ends none is left; the header fits too. The
-- tmux server is this spec's own (-L), killed at the end.
package.path = "spec/e2e/support/?.lua;" .. package.path
local sh = require "sh"

local WIDTHS = { 60, 80, 120 }

local function tmux(sock, ...)
  return sh.run({ "tmux", "-L", sock, ... })
end

describe("leakbench run in a terminal", function()
  local dir, sock
  local panes = {}   -- width -> { samples = { text, ... }, final = text }

  setup(function()
    dir = sh.tmpdir()
    sock = "lb-progress-" .. dir:gsub("%W", "")
    assert.are.equal(0, sh.leakbench({ "init", dir }).status)
    local bin = os.getenv("LEAKBENCH")
    for _, w in ipairs(WIDTHS) do
      -- the command's status, then a shell that waits: the pane stays
      local cmd = table.concat({ sh.quote(bin), "run", sh.quote(dir .. "/scenarios"), "--subject",
        sh.quote(dir .. "/subjects/my-subject.lua"), "--repeat", "2", "--jobs", "2", "--out",
        sh.quote(dir .. "/out-" .. w), "; echo LB-EXIT=$?; exec cat" }, " ")
      local r = tmux(sock, "new-session", "-d", "-s", "w" .. w, "-x", tostring(w), "-y", "40",
        "sh", "-c", cmd)
      assert.are.equal(0, r.status, r.stderr)
      panes[w] = { samples = {} }
    end
    -- sample every pane until each has printed its exit status
    sh.retry(900, function()
      local all = true
      for _, w in ipairs(WIDTHS) do
        local p = panes[w]
        if not p.final then
          local text = tmux(sock, "capture-pane", "-p", "-J", "-S", "-", "-t", "w" .. w).stdout
          p.samples[#p.samples + 1] = text
          if text:find("LB-EXIT=", 1, true) then p.final = text else all = false end
        end
      end
      return all
    end)
  end)

  teardown(function()
    if sock then tmux(sock, "kill-server") end
    sh.rmtree(dir)
  end)

  for _, w in ipairs(WIDTHS) do
    it("fits " .. w .. " columns: one progress line at a time, never wrapped, none left at the end", function()
      local p = panes[w]
      assert.truthy(p.final, "the run did not finish in the pane")
      assert.truthy(p.final:find("LB-EXIT=0", 1, true), p.final)
      local seen = 0
      for _, text in ipairs(p.samples) do
        local progress = 0
        for line in text:gmatch("[^\n]*") do
          if line:find("%d+/%d+  %d+ running") then
            progress = progress + 1
            seen = seen + 1
            assert.truthy(utf8.len(line) <= w - 1, w .. ": " .. line)
            assert.truthy(line:find("%d+ leaked") and line:find("%d+ errors"), line)
          end
        end
        assert.truthy(progress <= 1, "more than one progress line in the pane:\n" .. text)
      end
      assert.truthy(seen > 0, "the progress line was never seen")
      -- the header, in lines that fit; no progress line left behind
      -- (an image build's notes may come first: they are not the display)
      local header = ("\n" .. p.final):match("\n(leakbench %d[^\n]*.-)\nscenario ")
      assert.truthy(header, p.final)
      for line in header:gmatch("[^\n]+") do assert.truthy(utf8.len(line) <= w - 1, line) end
      assert.truthy(header:find("leakbench ", 1, true))
      assert.is_nil(p.final:find("%d+ running"), p.final)
    end)
  end
end)

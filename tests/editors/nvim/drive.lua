-- Drives headless Neovim through the user's steps with the documented module
-- (lua/lsp-verify.lua beside this file) and writes what the editor saw as JSON, for
-- tests/editors/test_neovim.py to judge. Every wait is bounded; any error is recorded.
local project = os.getenv("LSP_VERIFY_PROJECT")
local out_path = os.getenv("LSP_VERIFY_OUT")
local scenario = os.getenv("LSP_VERIFY_SCENARIO")
local wait_ms = tonumber(os.getenv("LSP_VERIFY_WAIT_MS") or "30000")
local out = { steps = {} }

local function step(name)
  table.insert(out.steps, name)
end

local function verify_diagnostics(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == "verify" then
      table.insert(found, { lnum = d.lnum, col = d.col, message = d.message, source = d.source })
    end
  end
  return found
end

local notes = {}
vim.notify = function(message, level)
  table.insert(notes, { message = message, level = level })
end

-- A server command through the module, and what it answered (or its error).
local function execute(command, bufnr)
  local record
  require("lsp-verify").execute(command, bufnr, function(err, result)
    record = err and { error = tostring(err.message or err) } or result
  end)
  vim.wait(wait_ms, function()
    return record ~= nil
  end, 20)
  return record
end

local function run_now(bufnr)
  return execute("verify.runNow", bufnr)
end

-- Open a file and wait until the lsp-verify client is attached and initialized.
local function open_attached(path)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  step("opened")
  out.attached = vim.wait(wait_ms, function()
    local client = require("lsp-verify").client(buf)
    return client ~= nil and client.initialized == true
  end, 20)
  step("attached")
  return buf
end

-- The user command, as its keymap calls it; what it told the user.
local function command_notes(name)
  notes = {}
  vim.cmd(name)
  vim.wait(wait_ms, function()
    return #notes > 0
  end, 20)
  return notes
end

local function full()
  local test_file = project .. "/tests/test_calc.py"
  local buf = open_attached(test_file)

  -- A change the failing line does not see, so its diagnostic is not withdrawn as stale.
  local last = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, last, last, false, { "", "# edited in Neovim" })
  vim.cmd("write")
  step("written")
  vim.wait(wait_ms, function()
    return #verify_diagnostics(buf) >= 2
  end, 20)
  out.after_failing_save = verify_diagnostics(buf)
  step("diagnostics read")

  out.run_now = run_now(buf)
  step("runNow")
  out.command_failed = command_notes("VerifyRunNow")

  -- The fix: the demo's bug is the divisor of mean().
  vim.cmd("edit " .. vim.fn.fnameescape(project .. "/calc.py"))
  local calc = vim.api.nvim_get_current_buf()
  local lines = vim.api.nvim_buf_get_lines(calc, 0, -1, false)
  for i, line in ipairs(lines) do
    lines[i] = line:gsub("%(len%(values%) %+ 1%)", "len(values)")
  end
  vim.api.nvim_buf_set_lines(calc, 0, -1, false, lines)
  vim.cmd("write")
  step("fixed")
  out.cleared = vim.wait(wait_ms, function()
    return #verify_diagnostics(buf) == 0
  end, 20)
  out.after_fix = verify_diagnostics(buf)

  out.command_passed = command_notes("VerifyRunNow")
  step("VerifyRunNow")
end

local function declined()
  local buf = open_attached(project .. "/tests/test_calc.py")
  out.run_now = run_now(buf)
  out.diagnostics = verify_diagnostics(buf)
  step("runNow")
  out.command_declined = command_notes("VerifyRunNow")
  -- What the module shows for records the server sends with `exitCode: null`, however
  -- the client decoded the null, and for a long multi-line message.
  local describe, one_line = require("lsp-verify").describe, require("lsp-verify").one_line
  out.described = {
    timed_out = describe({ outcome = "timed-out", exitCode = vim.NIL, command = "make test",
      tail = { "still running" } }),
    declined_nil = describe({ outcome = "declined", command = "make test", reason = "no" }),
    failed = describe({ outcome = "failed", exitCode = 2, command = "make test", tail = { "x" } }),
  }
  out.long = one_line(string.rep("word ", 60) .. "\nsecond line", 119)
  out.joined = one_line("first\nsecond")
  step("described")
end

local function last_run(bufnr)
  return execute("verify.showLastRun", bufnr)
end

-- The light bulb's list, as the user gets it: vim.lsp.buf.code_action() on the failing line,
-- the choice made through vim.ui.select (which Neovim's own menu uses), the action applied.
local function code_action()
  local buf = open_attached(project .. "/tests/test_calc.py")
  vim.cmd("write")
  vim.wait(wait_ms, function()
    return #verify_diagnostics(buf) >= 2
  end, 20)
  local located
  for _, d in ipairs(verify_diagnostics(buf)) do
    if d.lnum > 0 then
      located = d
    end
  end
  out.located = located
  local before = last_run(buf)
  out.before = before
  vim.api.nvim_win_set_cursor(0, { located.lnum + 1, located.col })
  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = {}
    local chosen
    for i, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(offered, title)
      if title:find("Run verify again", 1, true) then
        chosen = i
      end
    end
    on_choice(chosen and items[chosen] or nil, chosen)
  end
  vim.lsp.buf.code_action()
  vim.wait(wait_ms, function()
    return offered ~= nil
  end, 20)
  out.offered = offered or {}
  step("code action applied")
  local after
  vim.wait(wait_ms, function()
    after = last_run(buf)
    return after ~= nil and after.startedAt ~= before.startedAt
  end, 100)
  out.after = after
end

local ok, err = pcall(function()
  require("lsp-verify").setup(vim.fn.json_decode(os.getenv("LSP_VERIFY_OPTS")))
  if scenario == "declined" then
    declined()
  elseif scenario == "code_action" then
    code_action()
  else
    full()
  end
end)
out.ok = ok
out.error = ok and vim.NIL or tostring(err)

-- Stop the clients and wait for them, so the server has exited before Neovim does.
vim.lsp.stop_client(vim.lsp.get_active_clients())
out.stopped = vim.wait(10000, function()
  return #vim.lsp.get_active_clients() == 0
end, 20)

local file = io.open(out_path, "w")
file:write(vim.fn.json_encode(out))
file:close()
vim.cmd("qall!")

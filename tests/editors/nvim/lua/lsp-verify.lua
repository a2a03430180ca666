-- lsp-verify for Neovim 0.7 and newer: runs the project's own checks on save and shows
-- what failed as diagnostics, beside every other language server of the buffer.
-- Save as ~/.config/nvim/lua/lsp-verify.lua and call require("lsp-verify").setup() from
-- init.lua (options: see M.defaults).
local M = {}

M.defaults = {
  -- How to start the server; "lsp-verify" must be on PATH (or give the full path).
  cmd = { "lsp-verify" },
  -- The `verify` settings (command, globs, timeoutMs, runOn, tailLines, autoDetect,
  -- confirm, failedFirst). Empty: the project decides (.lsp-verify.toml, its script, the detector),
  -- and you are asked before a repository's command first runs.
  settings = {},
  -- The nearest folder holding one of these is the project root.
  root_markers = {
    ".lsp-verify.toml", "pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini",
    "package.json", "Cargo.toml", "Makefile", ".git",
  },
  -- A normal-mode key for :VerifyRunNow; false for none.
  run_now_key = "<leader>vr",
}

local options = vim.deepcopy(M.defaults)
local clients = {} -- root folder -> client id (Neovim 0.7 has no vim.lsp.start to reuse them)

local function root_of(path)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  while true do
    for _, marker in ipairs(options.root_markers) do
      if vim.loop.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      return nil
    end
    dir = parent
  end
end

-- A Lua {} would go out as the JSON list [], which is not a settings object.
local function settings_object()
  if next(options.settings) == nil then
    return vim.empty_dict()
  end
  return options.settings
end

-- The server asks before a repository's command first runs. Neovim's own prompt works in a
-- terminal, but with no UI attached (nvim --headless) it waits for ever: say "no" instead.
local function ask(err, params, ctx, config)
  if #vim.api.nvim_list_uis() == 0 then
    return vim.NIL
  end
  return vim.lsp.handlers["window/showMessageRequest"](err, params, ctx, config)
end

local function config_for(root)
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  -- Neovim answers workspace/configuration from `settings` without declaring that it does.
  capabilities.workspace.configuration = true
  return {
    name = "lsp-verify",
    cmd = options.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    capabilities = capabilities,
    init_options = { verify = settings_object() },
    settings = { verify = settings_object() },
    handlers = { ["window/showMessageRequest"] = ask },
  }
end

function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local path = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].buftype ~= "" or path == "" then
    return
  end
  local root = root_of(path)
  if root == nil then
    return
  end
  if vim.lsp.start then -- 0.8+: reuses the client of the same name and root
    -- 0.8 attaches the current buffer whatever opts.bufnr says: make it current.
    vim.api.nvim_buf_call(bufnr, function()
      vim.lsp.start(config_for(root), { bufnr = bufnr })
    end)
    return
  end
  local id = clients[root]
  if id == nil or vim.lsp.client_is_stopped(id) then
    id = vim.lsp.start_client(config_for(root))
    clients[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local all = vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()
  for _, client in ipairs(all) do
    if client.name == "lsp-verify" and vim.lsp.buf_is_attached(bufnr, client.id) then
      return client
    end
  end
  return nil
end

-- Sends workspace/executeCommand with the buffer's URI; on_result(err, result) gets the
-- answer. Asynchronous, because a run can take as long as the project's tests do.
function M.execute(command, bufnr, on_result)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.client(bufnr)
  if client == nil then
    vim.notify("lsp-verify is not attached to this buffer", vim.log.levels.WARN)
    return false
  end
  local params = { command = command, arguments = { vim.uri_from_bufnr(bufnr) } }
  local function handler(err, result)
    on_result(err, result)
  end
  if vim.fn.has("nvim-0.11") == 1 then -- client methods take `:` from 0.11 on
    return client:request("workspace/executeCommand", params, handler, bufnr)
  end
  return client.request("workspace/executeCommand", params, handler, bufnr)
end

-- The commands the server's messages name, as a Neovim user types them.
local typed = {
  ["verify.runNow"] = ":VerifyRunNow",
  ["verify.cancel"] = ":VerifyCancel",
  ["verify.showLastRun"] = ":VerifyLastRun",
  ["verify.explain"] = ":VerifyExplain",
  ["verify.approve"] = ":VerifyApprove",
  ["verify.revoke"] = ":VerifyRevoke",
}

-- One line that fits the command line: a longer message, or one of several lines, stops
-- Neovim at a hit-enter prompt. The diagnostics and :VerifyLastRun hold the rest. `room`:
-- the columns there are (the command line's, where a screen shows it; else no limit).
function M.one_line(text, room)
  text = tostring(text):gsub("%s*\n%s*", " | "):gsub("verify%.%a+", typed)
  if room == nil and #vim.api.nvim_list_uis() > 0 then
    room = vim.v.echospace
  end
  if room ~= nil and vim.fn.strdisplaywidth(text) > math.max(room, 20) then
    text = vim.fn.strcharpart(text, 0, math.max(room, 20) - 1) .. "…"
  end
  return text
end

local function absent(value)
  return value == nil or value == vim.NIL
end

-- "verify failed (exit 1): pytest -x | 1 failed", "verify timed out: ...", "verify
-- declined: make test | you chose not to run it; ...": the outcome, the status where a
-- process gave one, the command, and what matters next.
function M.describe(record)
  if type(record) ~= "table" then
    return "verify: no run (no workspace folder for this buffer)"
  end
  local status = absent(record.exitCode) and "" or string.format(" (exit %s)", record.exitCode)
  local command = absent(record.command) and "no command" or record.command
  local text = string.format("verify %s%s: %s", tostring(record.outcome):gsub("-", " "), status, command)
  if record.outcome == "failed" or record.outcome == "timed-out" then
    local tail = type(record.tail) == "table" and record.tail or {}
    text = text .. " | " .. tostring(tail[#tail] or "")
  elseif record.outcome ~= "passed" and not absent(record.reason) then
    text = text .. " | " .. tostring(record.reason)
  end
  return text
end

local function show(err, result, level)
  if err then
    vim.notify(M.one_line("verify: " .. tostring(err.message or err)), vim.log.levels.ERROR)
  else
    vim.notify(M.one_line(result), level or vim.log.levels.INFO)
  end
end

local commands = {
  VerifyRunNow = function()
    M.execute("verify.runNow", 0, function(err, record)
      local failed = type(record) == "table" and record.outcome ~= "passed"
      show(err, M.describe(record), failed and vim.log.levels.WARN or nil)
    end)
  end,
  VerifyCancel = function()
    M.execute("verify.cancel", 0, function(err, cancelled)
      show(err, string.format("verify: cancelled %d run(s)", type(cancelled) == "table" and #cancelled or 0))
    end)
  end,
  VerifyLastRun = function()
    M.execute("verify.showLastRun", 0, function(err, record)
      show(err, record == nil and "verify: nothing has run yet" or M.describe(record))
    end)
  end,
  VerifyExplain = function()
    M.execute("verify.explain", 0, function(err, plan)
      show(err, type(plan) == "table" and ("verify would run: " .. tostring(plan.command)
        .. " | " .. tostring(plan.reason)) or "verify: no workspace folder")
    end)
  end,
  VerifyApprove = function()
    M.execute("verify.approve", 0, function(err, answer)
      show(err, "verify: " .. vim.fn.json_encode(answer))
    end)
  end,
  VerifyRevoke = function()
    M.execute("verify.revoke", 0, function(err, answer)
      show(err, "verify: " .. vim.fn.json_encode(answer))
    end)
  end,
}

function M.setup(opts)
  options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  if opts and opts.root_markers then -- lists are replaced, not merged index by index
    options.root_markers = opts.root_markers
  end
  for name, run in pairs(commands) do
    vim.api.nvim_create_user_command(name, run, {})
  end
  if options.run_now_key then
    vim.keymap.set("n", options.run_now_key, "<cmd>VerifyRunNow<cr>", { desc = "verify.runNow" })
  end
  local group = vim.api.nvim_create_augroup("lsp-verify", { clear = true })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = group,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  -- Buffers that were open before setup() ran.
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      M.attach(bufnr)
    end
  end
end

return M

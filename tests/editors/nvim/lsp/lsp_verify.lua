---@brief
---
--- https://pypi.org/project/lsp-verify/
---
--- Runs the project's own verification command (its tests, type check or lint) after every
--- save and shows what failed as diagnostics, beside those of every other language server.
--- The command is the project's (`.lsp-verify.toml`, a configured pytest, tox, an npm `test`
--- script, Cargo, a Makefile `test` target, ...) or `settings.verify.command`; a command
--- from the repository runs only once you approve it (the server asks, or run
--- `lsp-verify approve DIR` in a terminal).
---
--- ```sh
--- pipx install lsp-verify
--- ```
---
--- ```lua
--- vim.lsp.enable('lsp_verify')
--- ```

---@type vim.lsp.Config
return {
  cmd = { 'lsp-verify' },
  filetypes = {
    'python',
    'javascript',
    'javascriptreact',
    'typescript',
    'typescriptreact',
    'rust',
    'go',
    'c',
    'cpp',
    'make',
    'sh',
    'toml',
  },
  root_markers = {
    '.lsp-verify.toml',
    'pyproject.toml',
    'pytest.ini',
    'setup.cfg',
    'tox.ini',
    'package.json',
    'Cargo.toml',
    'go.mod',
    'Makefile',
    '.git',
  },
  -- Neovim answers workspace/configuration from here. Empty: the project decides.
  settings = {
    verify = vim.empty_dict(),
  },
  init_options = {
    verify = vim.empty_dict(),
  },
}

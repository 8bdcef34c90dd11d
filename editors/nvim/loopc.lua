-- loopc for Neovim: the `loop` filetype for *.loop plans, the `loopc lsp`
-- language server (diagnostics, go to definition, hover, symbols,
-- completion, formatting) and `:LoopFmt`.
--
-- Install: copy this file to ~/.config/nvim/plugin/loopc.lua (it runs at
-- startup), or put it anywhere on 'runtimepath' under lua/ and
-- `require('loopc')` from init.lua. Needs `loopc` on $PATH, or set
-- `vim.g.loopc_cmd = { '/path/to/loopc', 'lsp' }` before this file runs.
-- Works with Neovim 0.7 (Debian 12) and later.

local M = {}

local group = vim.api.nvim_create_augroup('loopc', { clear = true })
local client_id = nil -- Neovim 0.7: one client shared by every plan buffer

local function root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(name, ':p:h')
  local git = vim.fn.finddir('.git', dir .. ';')
  if git ~= '' then
    return vim.fn.fnamemodify(git, ':p:h:h')
  end
  return dir
end

function M.attach(bufnr)
  local config = {
    name = 'loopc',
    cmd = vim.g.loopc_cmd or { 'loopc', 'lsp' },
    root_dir = root_dir(bufnr),
  }
  if vim.lsp.start then -- Neovim >= 0.8 reuses a running client by name and root
    vim.lsp.start(config, { bufnr = bufnr })
    return
  end
  if client_id == nil or vim.lsp.get_client_by_id(client_id) == nil then
    client_id = vim.lsp.start_client(config)
  end
  if client_id then
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
end

function M.format()
  if vim.lsp.buf.format then
    vim.lsp.buf.format({ name = 'loopc' })
  else
    vim.lsp.buf.formatting_sync()
  end
end

vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
  group = group,
  pattern = '*.loop',
  callback = function(args)
    vim.api.nvim_buf_set_option(args.buf, 'filetype', 'loop')
  end,
})

vim.api.nvim_create_autocmd('FileType', {
  group = group,
  pattern = 'loop',
  callback = function(args)
    local bo = vim.bo[args.buf]
    bo.commentstring = '# %s'
    bo.comments = ':#'
    bo.expandtab = true
    bo.shiftwidth = 2
    bo.tabstop = 2
    bo.omnifunc = 'v:lua.vim.lsp.omnifunc'
    vim.api.nvim_buf_create_user_command(args.buf, 'LoopFmt', M.format, {
      desc = 'Format the plan with loopc fmt (through the language server)',
    })
    M.attach(args.buf)
  end,
})

return M

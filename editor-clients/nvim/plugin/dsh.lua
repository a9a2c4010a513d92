-- dsh.nvim user commands (Neovim >= 0.7). Configure with require('dsh').setup{...}.
if vim.g.loaded_dsh then
  return
end
vim.g.loaded_dsh = true

if vim.fn.has('nvim-0.7') ~= 1 then
  vim.api.nvim_echo({ { 'dsh.nvim needs Neovim 0.7 or newer', 'ErrorMsg' } }, true, {})
  return
end

local cmd = vim.api.nvim_create_user_command

cmd('DshSearch', function(a)
  require('dsh').search(a.args)
end, { nargs = '+', desc = 'dsh: web search through the sidecar' })

cmd('DshStatus', function()
  require('dsh').status()
end, { nargs = 0, desc = 'dsh: sidecar status' })

cmd('DshSuggest', function(a)
  local tool, input = a.args:match('^%s*(%S+)%s+(.-)%s*$')
  require('dsh').suggest(tool, input)
end, {
  nargs = '+',
  desc = 'dsh: what would the suggester say about {tool} {input}',
  complete = function(...)
    return require('dsh.complete').suggest(...)
  end,
})

cmd('DshDismiss', function(a)
  local family, path = a.args:match('^%s*(%S+)%s*(.-)%s*$')
  require('dsh').dismiss(family, path)
end, {
  nargs = '+',
  desc = 'dsh: dismiss a suggestion family [path]',
  complete = function(...)
    return require('dsh.complete').dismiss(...)
  end,
})

cmd('DshLog', function()
  require('dsh').log()
end, { nargs = 0, desc = 'dsh: log lines received from the sidecar' })

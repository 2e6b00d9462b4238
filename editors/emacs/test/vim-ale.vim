" Drives Vim 9 + ALE with the docs/editors.md recipe, run by emacs_test.go:
"   vim -N -u <vimrc: filetype on + the recipe> -i NONE -n -es -S vim-ale.vim FILE
" Edits the buffer without saving, lets ALE sync it to ctxls, then asks the
" daemon (over ALE's own connection) for its copy with ctxls.document.get.
" Then sources the documented command example ($CTXLS_VIM_COMMAND) and reads
" the context it set. Writes {"buffer", "response", "context"} or {"error"}
" to $CTXLS_VIM_OUT.
let s:result = {}

function! s:Wait(what, cond) abort
  let l:i = 0
  while !eval(a:cond) && l:i < 200
    sleep 50m
    let l:i += 1
  endwhile
  if !eval(a:cond)
    throw 'timed out waiting for ' . a:what
  endif
endfunction

function! s:OnDocument(response) abort
  let s:result.response = a:response
endfunction

try
  if &filetype isnot# 'go'
    throw 'filetype is "' . &filetype . '", not go'
  endif
  " ALE starts the server and opens the buffer on its first lint.
  ALELint
  call s:Wait('ALE to start ctxls', '!empty(filter(values(ale#lsp#GetConnections()), "get(v:val, ''initialized'', 0)"))')
  call setline(1, 'package main // unsaved from Vim: naïve café 😀')
  call append(2, '// another unsaved line')
  ALELint
  sleep 500m
  let s:uri = ale#path#ToFileURI(expand('%:p'))
  call ale#lsp_linter#SendRequest(bufnr(''), 'ctxls',
  \ [0, 'workspace/executeCommand', {'command': 'ctxls.document.get', 'arguments': [{'uri': s:uri}]}],
  \ function('s:OnDocument'))
  call s:Wait('ctxls.document.get', 'has_key(s:result, "response")')
  let s:result.buffer = join(getline(1, '$'), "\n") . "\n"
  let s:result.uri = s:uri
  " The documented command example, then the context it set.
  source $CTXLS_VIM_COMMAND
  sleep 300m
  call ale#lsp_linter#SendRequest(bufnr(''), 'ctxls',
  \ [0, 'workspace/executeCommand', {'command': 'ctxls.context.get', 'arguments': [{'setName': 'files'}]}],
  \ {response -> extend(s:result, {'context': response})})
  call s:Wait('ctxls.context.get', 'has_key(s:result, "context")')
catch
  let s:result.error = v:exception . ' at ' . v:throwpoint
endtry
call writefile([json_encode(s:result)], $CTXLS_VIM_OUT)
qall!

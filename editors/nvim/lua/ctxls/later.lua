-- Answering a request of the daemon's later: a review waits for the user,
-- the diagnostics for a language server (ctxls.review, ctxls.diagnostics).
--
-- Neovim answers a server's request with what its handler returns, and
-- these answers are not known yet when it runs. From 0.10 the
-- handler runs in a coroutine and may yield until the answer is known.
-- Before that (0.7-0.9) the request is answered by a function local to
-- vim.lsp.rpc (send_response) right after the handler returns: the
-- handler finds it on its caller's stack (the debug library), makes it
-- drop the placeholder answered now, and calls it itself later. Where
-- neither works, the caller answers at once (the review with a numbered
-- list, inputlist; the diagnostics without waiting).

local L = {}

local originals = {} -- our send_response wrappers → the rpc's own
local held = {} -- the rpc's send_response → { [request id] = true }

-- hold finds the running request's send_response and holds its answer:
-- it returns the function that sends the answer, or nil.
local function hold()
  for level = 2, 30 do
    local info = debug.getinfo(level, "f")
    if not info then
      return nil
    end
    local decoded, send, index
    for i = 1, 255 do
      local name, value = debug.getupvalue(info.func, i)
      if not name then
        break
      end
      if name == "decoded" then
        decoded = value
      elseif name == "send_response" then
        send, index = value, i
      end
    end
    if type(decoded) == "table" and decoded.id ~= nil and type(send) == "function" then
      local orig = originals[send] or send
      if not originals[send] then
        local wrapper = function(id, err, result)
          local h = held[orig]
          if h and h[id] then
            h[id] = nil -- the placeholder answered as the handler returned
            return true
          end
          return orig(id, err, result)
        end
        originals[wrapper] = orig
        debug.setupvalue(info.func, index, wrapper)
      end
      held[orig] = held[orig] or {}
      held[orig][decoded.id] = true
      local id = decoded.id
      return function(result)
        orig(id, nil, result)
      end
    end
  end
end

-- later lets the running request handler answer later: it returns how
-- ("yield": return coroutine.yield(); "held": return vim.NIL) and the
-- function that answers, or nil when neither is possible.
function L.later()
  local co, main = coroutine.running()
  if co and not main then
    return "yield", function(result)
      -- After the handler has yielded, whenever the answer comes.
      vim.schedule(function()
        coroutine.resume(co, result)
      end)
    end
  end
  local ok, reply = pcall(hold)
  if ok and reply then
    return "held", reply
  end
end

return L

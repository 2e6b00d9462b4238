-- Images that go with a question (:CtxlsAttach): read from a file, checked
-- (PNG, JPEG, GIF or WebP by their first bytes, 5 MiB at most, ten at
-- most) and sent as base64 data URLs in ctxls/chat's images. The daemon
-- copies each into the session folder's sources/ and names it in the stored
-- question by a line "[image: sources/NAME]"; the chat shows that line as
-- "_image: NAME_", and Enter (or gf) on it opens the image.
local M = {}

M.max_bytes = 5 * 1024 * 1024
M.max_images = 10

-- base64 ----------------------------------------------------------------------

local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local pairs12 -- the 4096 two-character codes of 12 bits, built once

local function codes()
  if not pairs12 then
    pairs12 = {}
    for i = 0, 4095 do
      local hi, lo = math.floor(i / 64) + 1, i % 64 + 1
      pairs12[i] = alphabet:sub(hi, hi) .. alphabet:sub(lo, lo)
    end
  end
  return pairs12
end

-- encode is data (any bytes) in base64 with padding.
function M.encode(data)
  local p = codes()
  local out, part, n = {}, {}, 0
  local len = #data
  local full = len - len % 3
  for i = 1, full, 3 do
    local a, b, c = data:byte(i, i + 2)
    local v = a * 65536 + b * 256 + c
    n = n + 1
    part[n] = p[math.floor(v / 4096)] .. p[v % 4096]
    if n == 4096 then
      out[#out + 1] = table.concat(part)
      part, n = {}, 0
    end
  end
  out[#out + 1] = table.concat(part, "", 1, n)
  local rest = len - full
  if rest == 1 then
    local v = data:byte(len) * 65536
    out[#out + 1] = p[math.floor(v / 4096)] .. "=="
  elseif rest == 2 then
    local a, b = data:byte(len - 1, len)
    local v = a * 65536 + b * 256
    out[#out + 1] = p[math.floor(v / 4096)] .. alphabet:sub(math.floor(v / 64) % 64 + 1, math.floor(v / 64) % 64 + 1) .. "="
  end
  return table.concat(out)
end

-- Types -----------------------------------------------------------------------

-- mime is the type of an image by its first bytes; nil when they are not
-- those of a PNG, JPEG, GIF or WebP image.
function M.mime(head)
  if head:sub(1, 8) == "\137PNG\r\n\26\n" then
    return "image/png"
  elseif head:sub(1, 3) == "\255\216\255" then
    return "image/jpeg"
  elseif head:sub(1, 6) == "GIF87a" or head:sub(1, 6) == "GIF89a" then
    return "image/gif"
  elseif head:sub(1, 4) == "RIFF" and head:sub(9, 12) == "WEBP" then
    return "image/webp"
  end
  return nil
end

local function thousands(n)
  local s = tostring(n)
  while true do
    local t, k = s:gsub("^(%d+)(%d%d%d)", "%1,%2")
    s = t
    if k == 0 then
      return s
    end
  end
end

-- read reads the image file at path: { name, path, url } (url: its data
-- URL), or nil and what is wrong with it, said to the user.
function M.read(path)
  local name = vim.fn.fnamemodify(path, ":t")
  local st = vim.loop.fs_stat(path)
  if not st then
    return nil, string.format("%s: no such file", path)
  end
  if st.type ~= "file" then
    return nil, string.format("%s is not a file", path)
  end
  if st.size > M.max_bytes then
    return nil, string.format("%s is %s bytes; an image may be at most 5 MiB (%s bytes)", name, thousands(st.size), thousands(M.max_bytes))
  end
  local f, err = io.open(path, "rb")
  if not f then
    return nil, err
  end
  local data = f:read("*a") or ""
  f:close()
  if #data > M.max_bytes then -- grew meanwhile
    return nil, string.format("%s is %s bytes; an image may be at most 5 MiB (%s bytes)", name, thousands(#data), thousands(M.max_bytes))
  end
  local mime = M.mime(data:sub(1, 16))
  if not mime then
    return nil, string.format("%s is not a PNG, JPEG, GIF or WebP image", name)
  end
  return { name = name, path = path, url = "data:" .. mime .. ";base64," .. M.encode(data) }
end

-- label names images as the UI shows them: "image: shot.png",
-- "images: a.png, b.png"; "" for none.
function M.label(list)
  if #list == 0 then
    return ""
  end
  local names = vim.tbl_map(function(im)
    return im.name
  end, list)
  return (#list == 1 and "image: " or "images: ") .. table.concat(names, ", ")
end

-- In the chat -----------------------------------------------------------------

-- line is how the chat shows an image named name.
function M.line(name)
  return "_image: " .. name .. "_"
end

-- shown is a stored question's text as the chat shows it: each image line
-- "[image: sources/NAME]" as M.line(NAME).
function M.shown(content)
  local lines = vim.split(content, "\n", { plain = true })
  for i, l in ipairs(lines) do
    local name = l:match("^%[image: sources/([^%]/\\]+)%]$")
    if name and name ~= "." and name ~= ".." then
      lines[i] = M.line(name)
    end
  end
  return table.concat(lines, "\n")
end

-- name_at is the image named on a chat line, or nil.
function M.name_at(line)
  return (line or ""):match("^_image: ([^/\\]+)_$")
end

-- open opens the image at path: with config.open_image(path) when set, else
-- the system's viewer (xdg-open, open), else in a buffer.
function M.open(path, config)
  if config and config.open_image then
    return config.open_image(path)
  end
  for _, viewer in ipairs({ "xdg-open", "open" }) do
    if vim.fn.executable(viewer) == 1 then
      vim.fn.jobstart({ viewer, path }, { detach = true })
      return
    end
  end
  vim.cmd("edit " .. vim.fn.fnameescape(path))
end

return M

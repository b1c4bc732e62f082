-- wrk script: POSTs one JSON body a request, taken in order from a file of one body a line.
-- Each wrk thread takes every Nth line, so no body is sent twice while the file lasts.
--   wrk -t2 ... -s Scripts/bench-lua/post-lines.lua URL -- BODIES_FILE THREADS
-- When a thread runs out it starts again from its first line (the server then answers 401
-- `replayed`, which wrk counts as non-2xx: the file was too short for the run) and says so,
-- unless a third argument `cycle` says the bodies are meant to be sent again (passwords); then
-- the answers that are not 200 are counted by status and reported.
local counter = 0
local threads = {}

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  local path, total = args[1], tonumber(args[2])
  cycle = args[3] == "cycle"
  bodies = {}
  local n = 0
  for line in io.lines(path) do
    if n % total == id and #line > 0 then bodies[#bodies + 1] = line end
    n = n + 1
  end
  index = 0
  wrapped = 0
  headers = { ["Content-Type"] = "application/json" }
  statuses = ""
  if cycle then
    local counts = {}
    -- Defined only here, so the other runs pay nothing for reading responses.
    response = function(status)
      if status ~= 200 then
        counts[status] = (counts[status] or 0) + 1
        local parts = {}
        for code, n in pairs(counts) do parts[#parts + 1] = code .. "=" .. n end
        statuses = table.concat(parts, " ")
      end
    end
  end
end

function request()
  index = index + 1
  if index > #bodies then
    index = 1
    wrapped = wrapped + 1
  end
  return wrk.format("POST", nil, headers, bodies[index])
end

function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    local seen = thread:get("statuses")
    if seen and #seen > 0 then io.write(string.format("statuses not 200: thread %d: %s\n", thread:get("id"), seen)) end
    local times = thread:get("wrapped")
    if times and times > 0 and not thread:get("cycle") then
      io.write(string.format("bodies exhausted: thread %d started over %d time(s)\n", thread:get("id"), times))
    end
  end
end

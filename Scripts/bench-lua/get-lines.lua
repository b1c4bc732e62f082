-- wrk script: GETs one path a request, taken in turn from a file of one path a line (each wrk
-- thread starts at its own offset), so the reads spread over many keys instead of one hot row.
--   wrk -t2 ... -s Scripts/bench-lua/get-lines.lua URL -- PATHS_FILE [HEADER_NAME HEADER_VALUE]
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end

function init(args)
  paths = {}
  for line in io.lines(args[1]) do
    if #line > 0 then paths[#paths + 1] = line end
  end
  index = (id * 7919) % #paths
  headers = {}
  if args[2] then headers[args[2]] = args[3] end
end

function request()
  index = index % #paths + 1
  return wrk.format("GET", paths[index], headers)
end

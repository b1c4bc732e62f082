-- wrk script for Scripts/soak: mixed traffic at saturation on every connection.
--   wrk ... -s Scripts/soak-lua/mixed.lua URL -- SIGN_INS NOTIFICATIONS THREADS BEARER SIGN_IN_RATE NOTIFICATION_RATE
-- Each request is, in this order of preference: a logout of a session an earlier sign-in of
-- this thread created; a sign-in, when this thread is behind SIGN_IN_RATE/THREADS a second; a
-- notification, likewise; otherwise GET /api/me with BEARER. Bodies come from files of one
-- signed body a line (siwa-bench fixture), each thread taking every THREADS-th line, never
-- sending one twice: when a file runs out, that kind stops and `done` says so.
local counter = 0
local threads = {}

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local function load(path, total)
  local lines, n = {}, 0
  for line in io.lines(path) do
    if n % total == id and #line > 0 then lines[#lines + 1] = line end
    n = n + 1
  end
  return lines
end

function init(args)
  local total = tonumber(args[3])
  sign_ins = load(args[1], total)
  notifications = load(args[2], total)
  sign_in_pool, notification_pool = #sign_ins, #notifications
  bearer = args[4]
  sign_in_rate = tonumber(args[5]) / total
  notification_rate = tonumber(args[6]) / total
  started = os.time()
  sent_sign_ins, sent_notifications, sent_logouts, sent_me = 0, 0, 0, 0
  sessions_made, other_non_2xx = 0, 0
  logouts = {}
  json = { ["Content-Type"] = "application/json" }
end

local function due(sent, rate)
  return sent < (os.time() - started + 1) * rate
end

function request()
  if #logouts > 0 then
    sent_logouts = sent_logouts + 1
    local token = table.remove(logouts, 1)
    return wrk.format("POST", "/api/logout", { ["Authorization"] = "Bearer " .. token, ["Content-Length"] = "0" }, nil)
  end
  if sent_sign_ins < #sign_ins and due(sent_sign_ins, sign_in_rate) then
    sent_sign_ins = sent_sign_ins + 1
    return wrk.format("POST", "/api/auth/apple", json, sign_ins[sent_sign_ins])
  end
  if sent_notifications < #notifications and due(sent_notifications, notification_rate) then
    sent_notifications = sent_notifications + 1
    return wrk.format("POST", "/apple/notifications", json, notifications[sent_notifications])
  end
  sent_me = sent_me + 1
  return wrk.format("GET", "/api/me", { ["Authorization"] = "Bearer " .. bearer }, nil)
end

function response(status, headers, body)
  if status >= 300 then
    other_non_2xx = other_non_2xx + 1
    return
  end
  -- A sign-in's answer carries a new session: log it out on a later request.
  local token = body and body:match('"session":{"token":"([^"]+)"')
  if token then
    sessions_made = sessions_made + 1
    table.insert(logouts, token)
  end
end

function done(summary, latency, requests)
  local totals = { sign_ins = 0, notifications = 0, logouts = 0, me = 0, sessions_made = 0, non_2xx = 0,
                   sign_in_pool = 0, notification_pool = 0 }
  for _, thread in ipairs(threads) do
    totals.sign_ins = totals.sign_ins + thread:get("sent_sign_ins")
    totals.notifications = totals.notifications + thread:get("sent_notifications")
    totals.logouts = totals.logouts + thread:get("sent_logouts")
    totals.me = totals.me + thread:get("sent_me")
    totals.sessions_made = totals.sessions_made + thread:get("sessions_made")
    totals.non_2xx = totals.non_2xx + thread:get("other_non_2xx")
    totals.sign_in_pool = totals.sign_in_pool + thread:get("sign_in_pool")
    totals.notification_pool = totals.notification_pool + thread:get("notification_pool")
  end
  local errors = summary.errors
  io.write(string.format(
    'SOAK {"requests":%d,"seconds":%.1f,"sign_ins":%d,"sessions_made":%d,"logouts":%d,"notifications":%d,"me":%d,' ..
    '"non_2xx":%d,"socket_errors":%d,"sign_in_pool":%d,"notification_pool":%d,"p99_ms":%.2f}\n',
    summary.requests, summary.duration / 1e6, totals.sign_ins, totals.sessions_made, totals.logouts, totals.notifications,
    totals.me, totals.non_2xx, errors.connect + errors.read + errors.write + errors.timeout, totals.sign_in_pool,
    totals.notification_pool, latency:percentile(99) / 1000))
end

-- wrk script: every request a POST with an empty body; the other headers come from -H.
--   wrk -t2 ... -H "Authorization: Bearer TOKEN" -s Scripts/bench-lua/post-empty.lua URL
wrk.method = "POST"
wrk.headers["Content-Length"] = "0"

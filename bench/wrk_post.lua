-- wrk script used by bench_runner: POSTs the exact request body the runner sends (bench_runner
-- substitutes __BODY__ with it) to /v1/chat/completions, so wrk and the runner are measured
-- against the same server, route and body. Standalone use: replace __BODY__ by a JSON body, then
--   wrk -t2 -c16 -d5s -s wrk_post.lua http://127.0.0.1:PORT/v1/chat/completions
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
wrk.body = "__BODY__"

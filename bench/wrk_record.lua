-- wrk with one record per answer: what orbit run's records (one line per answer, appended with
-- one write(2) at once) would cost a client like wrk. Loads the request of a filled-in
-- wrk_post.lua (WRK_POST; bench/compare.sh writes one into its work folder) and appends each
-- response body as one line to WRK_RECORDS (default wrk_records.jsonl), flushed at once:
--   WRK_POST=/tmp/work/wrk_post.lua wrk -t1 -c16 -d5s -s bench/wrk_record.lua \
--     http://127.0.0.1:PORT/v1/chat/completions
-- Measured in docs/performance.md (tenth round): wrk's rate does not change.
dofile(os.getenv("WRK_POST") or "wrk_post.lua")
local out
function init(args)
  out = assert(io.open(os.getenv("WRK_RECORDS") or "wrk_records.jsonl", "a"))
end
function response(status, headers, body)
  out:write((body:gsub("\n", " ")), "\n")
  out:flush()
end

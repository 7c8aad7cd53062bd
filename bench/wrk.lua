-- wrk script for bench/run.py: one scenario per run, chosen by environment variables.
--   BENCH_MODE   "get" (getReceipt with a random reference from BENCH_REFS, one per line)
--                or "create" (createReceiptFromPOS with a fresh token per request)
--   BENCH_AUTH   the Authorization header value, or empty for anonymous calls
--   BENCH_RUN    a prefix unique to this run, so created tokens never repeat across runs
--   BENCH_BODY   (create) the JSON body, with TOKEN where the fresh token goes
--   BENCH_TILLS  (create) when set and above 0, each sale names one of this many tills
--                at random (terminal_id "T1".."Tn"), each numbered in its own series
--   BENCH_THINK_MS  when set and above 0, each connection waits a random time (mean this
--                many ms) between an answer and its next request, as a crowd of clients
--                does; wrk's latency does not count the wait
--   BENCH_KEEP   when set, each thread appends the answers other than 2xx it reads (up
--                to 100) to the file BENCH_KEEP.<thread>, one a line: status, a tab, the
--                body with its line ends escaped (bench/connections.py names them)
-- done() prints one line "BENCH_RESULT {json}" that bench/run.py reads.

local mode = os.getenv("BENCH_MODE") or "get"
local auth = os.getenv("BENCH_AUTH") or ""
local run = os.getenv("BENCH_RUN") or "x"
local body_template = os.getenv("BENCH_BODY") or ""

local think_ms = tonumber(os.getenv("BENCH_THINK_MS") or "0") or 0
local tills = tonumber(os.getenv("BENCH_TILLS") or "0") or 0

local thread_count = 0
local threads = {}

function setup(thread)
  thread_count = thread_count + 1
  thread:set("tid", thread_count)
  table.insert(threads, thread)
end

local function urlencode(text)
  return (text:gsub("[^A-Za-z0-9_.~-]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

local paths = {}
local headers = {}
local counter = 0
local body_head, body_tail

function init(args)
  math.randomseed(os.time() * 1000 + tid)
  if auth ~= "" then headers["Authorization"] = auth end
  if mode == "get" then
    for line in io.lines(os.getenv("BENCH_REFS")) do
      if line ~= "" then
        table.insert(paths, "/api/trpc/getReceipt?input=" .. urlencode('{"token":"' .. line .. '"}'))
      end
    end
  else
    headers["Content-Type"] = "application/json"
    local at = body_template:find("TOKEN", 1, true)
    body_head = body_template:sub(1, at - 1)
    body_tail = body_template:sub(at + 5)
  end
end

function request()
  if mode == "get" then
    return wrk.format("GET", paths[math.random(#paths)], headers)
  end
  counter = counter + 1
  local token = "b" .. run .. "t" .. tid .. "n" .. counter
  if tills > 0 then  -- the token's string ends, the till's begins
    token = token .. '","terminal_id":"T' .. math.random(tills)
  end
  return wrk.format("POST", "/api/trpc/createReceiptFromPOS", headers, body_head .. token .. body_tail)
end

if think_ms > 0 then
  function delay()
    return math.random(0, math.floor(2 * think_ms))
  end
end

local keep = os.getenv("BENCH_KEEP") or ""
if keep ~= "" then
  local kept = 0
  function response(status, headers, body)
    if (status < 200 or status > 299) and kept < 100 then
      kept = kept + 1
      local file = io.open(keep .. "." .. tid, "a")
      local text = (body or ""):gsub("\\", "\\\\"):gsub("\r", "\\r"):gsub("\n", "\\n")
      file:write(status, "\t", text, "\n")
      file:close()
    end
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests": %d, "duration_us": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d, "max_us": %d, '
      .. '"connect_errors": %d, "read_errors": %d, "write_errors": %d, "status_errors": %d, "timeouts": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end

-- Shared by the wrk scripts (docs/performance.md, "wrk, the same generator for both"): one connection per thread
-- (wrk -t N -c N), so a thread's Lua state is one client's, and a client's requests follow one another on its
-- connection as a state machine (request() builds the next, response() reads the answer). Each thread counts what it
-- finished and what went wrong; done() prints one line, "wrk-result {...}", that the benchmark reads.

local common = {}

local threads = {}
local next_id = 0

-- wrk's setup(thread): number each thread (its client's number) and keep it for done().
function common.setup(thread)
   thread:set("client", next_id)
   next_id = next_id + 1
   table.insert(threads, thread)
end

-- done(): the counts of every thread, and wrk's latency of every request (microseconds), as one JSON line.
function common.done(summary, latency)
   local units, unexpected, first = 0, 0, nil
   for _, thread in ipairs(threads) do
      units = units + (thread:get("units") or 0)
      unexpected = unexpected + (thread:get("unexpected") or 0)
      first = first or thread:get("first_unexpected")
   end
   local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
   io.write(string.format('wrk-result {"units": %d, "requests": %d, "seconds": %.6f, "unexpected": %d,'
         .. ' "socketErrors": %d, "p50": %.3f, "p99": %.3f, "p999": %.3f, "mean": %.3f, "first": %q}\n',
         units, summary.requests, summary.duration / 1e6, unexpected, errors,
         latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000,
         latency.mean / 1000, first or ""))
end

-- An answer that the workload did not expect: counted, and the first one kept for the report.
function common.unexpected(what, status, body)
   unexpected = (unexpected or 0) + 1
   if not first_unexpected then
      first_unexpected = what .. " answered " .. status .. ": " .. string.sub(body or "", 1, 200)
   end
end

-- Whether an answer has the status wanted; any other is counted as unexpected.
function common.expect(what, status, wanted, body)
   if status == wanted then
      return true
   end
   common.unexpected(what, status, body)
   return false
end

-- etcd: the request that grants a client its lease, once (a TTL longer than any run), and the lease's id from its
-- answer (nil, counted as unexpected, when it was refused).
function common.grant_lease()
   return wrk.format("POST", "/v3/lease/grant", { ["Content-Type"] = "application/json" }, '{"TTL": 86400}')
end

function common.lease_of(status, body)
   local lease = common.expect("lease grant", status, 200, body) and body:match('"ID":"(%d+)"') or nil
   return lease
end

-- One unit of the workload finished (a cycle, a renewal, a hand-over).
function common.done_one()
   units = (units or 0) + 1
end

-- Base64 of a string, as etcd's JSON gateway takes keys and values.
local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
function common.base64(data)
   return ((data:gsub(".", function(c)
      local bits, byte = "", c:byte()
      for i = 8, 1, -1 do
         bits = bits .. (byte % 2 ^ i - byte % 2 ^ (i - 1) > 0 and "1" or "0")
      end
      return bits
   end) .. "0000"):gsub("%d%d%d?%d?%d?%d?", function(bits)
      if #bits < 6 then
         return ""
      end
      local n = 0
      for i = 1, 6 do
         n = n + (bits:sub(i, i) == "1" and 2 ^ (6 - i) or 0)
      end
      return alphabet:sub(n + 1, n + 1)
   end) .. ({ "", "==", "=" })[#data % 3 + 1])
end

-- The lines of a file, each split at spaces (the leases a renew workload picks from).
function common.lines(path)
   local rows = {}
   for line in io.lines(path) do
      local fields = {}
      for field in line:gmatch("%S+") do
         table.insert(fields, field)
      end
      table.insert(rows, fields)
   end
   return rows
end

return common

-- The service's cycle (wrk -t N -c N -s service-cycle.lua URL -- TOKEN KEYS_PER_CLIENT RUN): each client acquires a
-- random key of its own share (POST /v1/leases, no wait), releases it with its fencing token (POST …/release), and
-- again. A cycle is the release's 200 after the acquire's 201; anything else is unexpected (a client's keys are its
-- own, so a 409 is one too).
local common = require("common")

setup = common.setup
done = common.done

local headers, per_client, run
local lease, token -- the lease this client holds, between its acquire and its release

function init(args)
   headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. args[1] }
   per_client = tonumber(args[2])
   run = args[3]
   math.randomseed(client * 7919 + os.time())
end

function request()
   if lease == nil then
      local target = client * per_client + math.random(0, per_client - 1)
      return wrk.format("POST", "/v1/leases", headers, string.format(
            '{"target": {"type": "opaque", "value": "wrk-%s-%d"}, "actor": "bench", "holder": "wrk",'
            .. ' "ttlSeconds": 30}', run, target))
   end
   return wrk.format("POST", "/v1/leases/" .. lease .. "/release", headers,
         '{"fencingToken": ' .. token .. '}')
end

function response(status, _, body)
   if lease == nil then
      if common.expect("acquire", status, 201, body) then
         lease = body:match('"leaseId":"([^"]+)"')
         token = body:match('"fencingToken":(%d+)')
      end
   else
      lease = nil
      if common.expect("release", status, 200, body) then
         common.done_one()
      end
   end
end

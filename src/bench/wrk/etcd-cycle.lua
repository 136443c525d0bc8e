-- etcd's cycle (wrk -t N -c N -s etcd-cycle.lua URL -- KEYS_PER_CLIENT RUN), the same clients on the same share of
-- keys as the service's, through etcd's JSON gateway: each client grants itself a lease once (a TTL longer than the
-- run), then per cycle one transaction that puts its key with that lease if the key does not exist (the
-- create-if-absent of etcd's lock recipe: "acquire"), and a delete of the key ("release").
local common = require("common")

setup = common.setup
done = common.done

local headers = { ["Content-Type"] = "application/json" }
local per_client, run, holder
local lease -- this client's etcd lease
local key   -- the key it holds, between its put and its delete

function init(args)
   per_client = tonumber(args[1])
   run = args[2]
   holder = common.base64("wrk")
   math.randomseed(client * 7919 + os.time())
end

function request()
   if lease == nil then
      return common.grant_lease()
   end
   if key == nil then
      key = common.base64(string.format("wrk-%s/%d", run, client * per_client + math.random(0, per_client - 1)))
      return wrk.format("POST", "/v3/kv/txn", headers, string.format(
            '{"compare": [{"key": "%s", "result": "EQUAL", "target": "CREATE", "create_revision": "0"}],'
            .. ' "success": [{"request_put": {"key": "%s", "value": "%s", "lease": "%s"}}],'
            .. ' "failure": [{"request_range": {"key": "%s"}}]}', key, key, holder, lease, key))
   end
   return wrk.format("POST", "/v3/kv/deleterange", headers, '{"key": "' .. key .. '"}')
end

local deleting = false

function response(status, _, body)
   if lease == nil then
      lease = common.lease_of(status, body)
   elseif not deleting then
      deleting = status == 200 and body:find('"succeeded":true', 1, true) ~= nil
      if not deleting then
         key = nil
         common.unexpected("acquire", status, body)
      end
   else
      deleting, key = false, nil
      if common.expect("release", status, 200, body) then
         common.done_one()
      end
   end
end

-- etcd's keep-alives (wrk -t N -c N -s etcd-renew.lua URL -- LEASES_FILE): each client keeps a random lease of the
-- file (one etcd lease id a line) alive, one /v3/lease/keepalive message per call. etcd answers a keep-alive from its
-- leader's memory: it writes nothing to disk, where the service's renew commits a row and an audit event.
local common = require("common")

setup = common.setup
done = common.done

local headers = { ["Content-Type"] = "application/json" }
local leases

function init(args)
   leases = common.lines(args[1])
   math.randomseed(client * 7919 + os.time())
end

function request()
   return wrk.format("POST", "/v3/lease/keepalive", headers, '{"ID": "' .. leases[math.random(1, #leases)][1] .. '"}')
end

function response(status, _, body)
   if status == 200 and body:find('"TTL":"', 1, true) then
      common.done_one()
   else
      common.unexpected("keep-alive", status, body)
   end
end

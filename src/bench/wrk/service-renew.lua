-- The service's renewals (wrk -t N -c N -s service-renew.lua URL -- TOKEN LEASES_FILE): each client renews a random
-- lease of the file (a line "leaseId fencingToken" per active lease), POST /v1/leases/{id}/renew with a TTL of an
-- hour; a renewal is a 200.
local common = require("common")

setup = common.setup
done = common.done

local headers, leases

function init(args)
   headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. args[1] }
   leases = common.lines(args[2])
   math.randomseed(client * 7919 + os.time())
end

function request()
   local lease = leases[math.random(1, #leases)]
   return wrk.format("POST", "/v1/leases/" .. lease[1] .. "/renew", headers,
         '{"fencingToken": ' .. lease[2] .. ', "ttlSeconds": 3600}')
end

function response(status, _, body)
   if common.expect("renew", status, 200, body) then
      common.done_one()
   end
end

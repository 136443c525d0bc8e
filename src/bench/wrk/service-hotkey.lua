-- The service's hot key (wrk -t N -c N -s service-hotkey.lua URL -- TOKEN RUN): every client acquires the one key
-- with waitSeconds 30 (the service answers once the key is handed to it), releases it at once, and again. A hand-over
-- is a grant; a 409 (the wait ran out) is counted apart, as busy.
local common = require("common")

setup = common.setup
done = common.done

local headers, body
local lease, token

function init(args)
   headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. args[1] }
   body = string.format('{"target": {"type": "opaque", "value": "wrk-hot-%s"}, "actor": "bench", "holder": "wrk",'
         .. ' "ttlSeconds": 30, "waitSeconds": 30}', args[2])
end

function request()
   if lease == nil then
      return wrk.format("POST", "/v1/leases", headers, body)
   end
   return wrk.format("POST", "/v1/leases/" .. lease .. "/release", headers, '{"fencingToken": ' .. token .. '}')
end

function response(status, _, answer)
   if lease ~= nil then
      lease = nil
      common.expect("release", status, 200, answer)
   elseif status == 201 then
      lease = answer:match('"leaseId":"([^"]+)"')
      token = answer:match('"fencingToken":(%d+)')
      common.done_one()
   elseif status ~= 409 then -- a 409: the wait ran out, and the client asks again
      common.unexpected("acquire", status, answer)
   end
end

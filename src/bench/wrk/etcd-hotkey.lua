-- etcd's hot key (wrk -t N -c N -s etcd-hotkey.lua URL -- RUN): every client locks the one key through etcd's lock
-- service (/v3/lock/lock blocks until the lock is its own; the lock is held under the client's lease, granted once),
-- unlocks it at once (/v3/lock/unlock), and again. A hand-over is a lock granted.
local common = require("common")

setup = common.setup
done = common.done

local headers = { ["Content-Type"] = "application/json" }
local name, lease, key

function init(args)
   name = common.base64("wrk-hot-" .. args[1])
end

function request()
   if lease == nil then
      return common.grant_lease()
   end
   if key == nil then
      return wrk.format("POST", "/v3/lock/lock", headers, '{"name": "' .. name .. '", "lease": "' .. lease .. '"}')
   end
   return wrk.format("POST", "/v3/lock/unlock", headers, '{"key": "' .. key .. '"}')
end

function response(status, _, body)
   if lease == nil then
      lease = common.lease_of(status, body)
   elseif key == nil then
      key = common.expect("lock", status, 200, body) and body:match('"key":"([^"]+)"') or nil
      if key then
         common.done_one()
      end
   else
      key = nil
      common.expect("unlock", status, 200, body)
   end
end

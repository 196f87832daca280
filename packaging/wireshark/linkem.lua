-- linkem.lua: Wireshark postdissector for linkem captures (docs/capture.md).
--
-- linkemd and linkem-sim write a comment on every record of a capture, in a fixed
-- key=value form (common/capture/include/linkem/capture.hpp, append_comment):
--
--   linkem dir=a_to_b class=default point=out worker=0 seq=17 arrived_ns=... delay_ns=...
--          limiter_wait_ns=... order_wait_ns=... scheduled_ns=... lateness_ns=...
--   linkem dir=a_to_b class=voip point=drop worker=0 seq=18 arrived_ns=... drop=loss
--
-- This script turns the comment into a `linkem` tree of fields that can be columns,
-- display filters and IO graphs: linkem.delay_ms, linkem.drop == "loss", linkem.drop == "aqm",
-- linkem.ecn == "ce", ... Records
-- without a linkem comment are left alone.
--
-- Installed by the linkem package into Wireshark's global Lua plugin folder
-- (/usr/lib/<triplet>/wireshark/plugins; `tshark -G folders`, "Global Lua Plugins");
-- by hand: copy it to ~/.local/lib/wireshark/plugins/. For one run:
--   tshark -X lua_script:linkem.lua -r FILE -Y 'linkem.drop == "loss"'
-- Written for Wireshark 4.0 (Debian 12) and later.

local linkem = Proto("linkem", "linkem emulator record")

local f = linkem.fields
f.dir = ProtoField.string("linkem.dir", "Direction")
f.class = ProtoField.string("linkem.class", "Class")
f.point = ProtoField.string("linkem.point", "Capture point")
f.worker = ProtoField.uint16("linkem.worker", "Worker", base.DEC)
f.seq = ProtoField.uint64("linkem.seq", "Sequence number", base.DEC)
f.arrived_ns = ProtoField.uint64("linkem.arrived_ns", "Arrived (ns since 1970, UTC)", base.DEC)
f.arrived = ProtoField.absolute_time("linkem.arrived", "Arrived", base.UTC)
f.delay_ns = ProtoField.int64("linkem.delay_ns", "Delay drawn (ns)", base.DEC)
f.delay_ms = ProtoField.double("linkem.delay_ms", "Delay drawn (ms)")
f.limiter_wait_ns = ProtoField.int64("linkem.limiter_wait_ns", "Limiter wait (ns)", base.DEC)
f.limiter_wait_ms = ProtoField.double("linkem.limiter_wait_ms", "Limiter wait (ms)")
f.order_wait_ns = ProtoField.int64("linkem.order_wait_ns", "Order wait (ns)", base.DEC)
f.order_wait_ms = ProtoField.double("linkem.order_wait_ms", "Order wait (ms)")
f.scheduled_ns = ProtoField.int64("linkem.scheduled_ns", "Scheduled delay (ns)", base.DEC)
f.scheduled_ms = ProtoField.double("linkem.scheduled_ms", "Scheduled delay (ms)")
f.lateness_ns = ProtoField.int64("linkem.lateness_ns", "Lateness (ns)", base.DEC)
f.lateness_us = ProtoField.double("linkem.lateness_us", "Lateness (us)")
f.drop = ProtoField.string("linkem.drop", "Dropped by")
f.ecn = ProtoField.string("linkem.ecn", "ECN mark by the queue discipline")

-- The record's comment (frame.comment in Wireshark 4.0 and later; pkt_comment before).
local ok, comment_field = pcall(Field.new, "frame.comment")
if not ok then
    comment_field = Field.new("pkt_comment")
end

-- A whole number of up to 20 digits (with an optional '-') as an exact Int64/UInt64: Lua's
-- numbers are doubles, exact only to 2^53, and arrived_ns is ~1.8e18. Built 9 digits at a
-- time (the Int64 functions take Lua numbers of at most 32 bits).
local function whole(text, unsigned)
    local neg = text:sub(1, 1) == "-"
    local digits = neg and text:sub(2) or text
    if not digits:match("^%d+$") or #digits > 20 or (neg and unsigned) then
        return nil
    end
    local v = unsigned and UInt64.new(0) or Int64.new(0)
    local at = 1
    while at <= #digits do
        local n = math.min(9, #digits - at + 1)
        v = v * (10 ^ n) + tonumber(digits:sub(at, at + n - 1))
        at = at + n
    end
    if neg then
        v = -v
    end
    return v
end

-- "linkem k=v k=v ..." -> {k = v}, or nil when the comment is not linkem's.
local function parse(text)
    if text:sub(1, 7) ~= "linkem " then
        return nil
    end
    local kv = {}
    for k, v in text:gmatch("(%S+)=(%S*)") do
        kv[k] = v
    end
    return kv
end

-- A duration key (ns) as its exact field and as a double in `unit` (1e6: ms, 1e3: us).
local function add_duration(tree, kv, key, ns_field, scaled_field, unit)
    local text = kv[key]
    if text == nil then
        return
    end
    local v = whole(text, false)
    if v == nil then
        return
    end
    tree:add(ns_field, v)
    tree:add(scaled_field, tonumber(text) / unit)
end

function linkem.dissector(tvb, pinfo, tree)
    local comments = { comment_field() }
    for _, c in ipairs(comments) do
        local kv = parse(tostring(c.value))
        if kv ~= nil and kv.point ~= nil then
            local t = tree:add(linkem)
            local summary = {}
            if kv.dir then
                t:add(f.dir, kv.dir)
                summary[#summary + 1] = kv.dir
            end
            if kv.class then
                t:add(f.class, kv.class)
                summary[#summary + 1] = kv.class
            end
            t:add(f.point, kv.point)
            summary[#summary + 1] = kv.point
            if kv.worker and tonumber(kv.worker) then
                t:add(f.worker, tonumber(kv.worker))
            end
            if kv.seq and whole(kv.seq, true) then
                t:add(f.seq, whole(kv.seq, true))
            end
            if kv.arrived_ns then
                local a = whole(kv.arrived_ns, true)
                if a ~= nil then
                    t:add(f.arrived_ns, a)
                    local s = whole(kv.arrived_ns:sub(1, -10), true)
                    local ns = tonumber(kv.arrived_ns:sub(-9))
                    if s ~= nil and ns ~= nil and #kv.arrived_ns > 9 then
                        t:add(f.arrived, NSTime.new(s:tonumber(), ns))
                    end
                end
            end
            add_duration(t, kv, "delay_ns", f.delay_ns, f.delay_ms, 1e6)
            add_duration(t, kv, "limiter_wait_ns", f.limiter_wait_ns, f.limiter_wait_ms, 1e6)
            add_duration(t, kv, "order_wait_ns", f.order_wait_ns, f.order_wait_ms, 1e6)
            add_duration(t, kv, "scheduled_ns", f.scheduled_ns, f.scheduled_ms, 1e6)
            add_duration(t, kv, "lateness_ns", f.lateness_ns, f.lateness_us, 1e3)
            if kv.delay_ns and tonumber(kv.delay_ns) then
                summary[#summary + 1] = string.format("delay %.3f ms", tonumber(kv.delay_ns) / 1e6)
            end
            if kv.drop then
                t:add(f.drop, kv.drop)
                summary[#summary + 1] = "drop=" .. kv.drop
            end
            if kv.ecn then
                t:add(f.ecn, kv.ecn)
                summary[#summary + 1] = "ecn=" .. kv.ecn
            end
            t:append_text(", " .. table.concat(summary, ", "))
            return
        end
    end
end

register_postdissector(linkem)

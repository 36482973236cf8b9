-- SPDX-License-Identifier: GPL-2.0-only
-- Wireshark dissector for netvm-switch captures (pcap, LINKTYPE_USER0 = 147).
--   tshark -X lua_script:fabric/netvm.lua -r FILE [-V]
-- Record = 4-byte capture pseudo-header (switch index, port, direction
-- 0 = leaving the port, reserved) + the link frame as it left the port:
--   route bytes (MSB set; low 7 bits = output port at the next switch)
--   nvm_pkt_hdr: type, version, src_node, dst_node, len (big-endian)
--   payload (len bytes), CRC-32 (IEEE, big-endian) over header+payload.
-- See docs/fabric.md and include/netvm/packet.h.

local netvm = Proto("netvm", "netvm fabric link frame")

local ptypes = { [1] = "RAW", [2] = "NETVM" }
local netops = { [1] = "WRITE", [2] = "WRITE_RESP", [3] = "READ_REQ",
                 [4] = "READ_RESP", [5] = "ATOMIC_REQ", [6] = "ATOMIC_RESP",
                 [7] = "ACK" }
local crcstat = { [0] = "Bad", [1] = "Good", [2] = "Unverified" }

local f = {
  switch   = ProtoField.uint8("netvm.switch", "Switch", base.DEC),
  port     = ProtoField.uint8("netvm.port", "Port", base.DEC),
  dir      = ProtoField.uint8("netvm.dir", "Direction", base.DEC,
                              { [0] = "out", [1] = "in" }),
  route    = ProtoField.uint8("netvm.route", "Route byte", base.HEX),
  rport    = ProtoField.uint8("netvm.route.port", "Output port", base.DEC, nil, 0x7f),
  nroute   = ProtoField.uint8("netvm.route_len", "Route bytes left", base.DEC),
  type     = ProtoField.uint8("netvm.type", "Type", base.HEX, ptypes),
  version  = ProtoField.uint8("netvm.version", "Version", base.DEC),
  src      = ProtoField.uint16("netvm.src", "Source node", base.DEC),
  dst      = ProtoField.uint16("netvm.dst", "Destination node", base.DEC),
  len      = ProtoField.uint16("netvm.len", "Payload length", base.DEC),
  payload  = ProtoField.bytes("netvm.payload", "Payload"),
  crc      = ProtoField.uint32("netvm.crc", "CRC-32", base.HEX),
  crcst    = ProtoField.uint8("netvm.crc.status", "CRC status", base.DEC, crcstat),
  op       = ProtoField.uint8("netvm.net.op", "Operation", base.DEC, netops),
  flags    = ProtoField.uint8("netvm.net.flags", "Flags", base.HEX),
  sport    = ProtoField.uint16("netvm.net.src_port", "Source port", base.DEC),
  dport    = ProtoField.uint16("netvm.net.dst_port", "Destination port", base.DEC),
  status   = ProtoField.uint16("netvm.net.status", "Status", base.DEC),
  sepoch   = ProtoField.uint32("netvm.net.src_epoch", "Source epoch", base.HEX),
  depoch   = ProtoField.uint32("netvm.net.dst_epoch", "Destination epoch", base.HEX),
  seq      = ProtoField.uint32("netvm.net.seq", "Sequence", base.DEC),
  ack      = ProtoField.uint32("netvm.net.ack", "Ack", base.DEC),
  req      = ProtoField.uint32("netvm.net.req", "Request id", base.DEC),
}
netvm.fields = {}
for _, v in pairs(f) do table.insert(netvm.fields, v) end

local e_short = ProtoExpert.new("netvm.short", "Frame too short",
                                expert.group.MALFORMED, expert.severity.ERROR)
local e_crc = ProtoExpert.new("netvm.crc.bad", "Bad CRC",
                              expert.group.CHECKSUM, expert.severity.WARN)
local e_len = ProtoExpert.new("netvm.len.bad", "Length does not match the frame",
                              expert.group.MALFORMED, expert.severity.WARN)
netvm.experts = { e_short, e_crc, e_len }

-- CRC-32 (IEEE 802.3, reflected, as zlib) with whichever bit library exists.
local B = bit32 or bit
local crc_table
local function crc32(tvb, off, n)
  if not B then return nil end
  if not crc_table then
    crc_table = {}
    for i = 0, 255 do
      local c = i
      for _ = 1, 8 do
        if B.band(c, 1) ~= 0 then
          c = B.bxor(B.rshift(c, 1), 0xEDB88320)
        else
          c = B.rshift(c, 1)
        end
      end
      crc_table[i] = c
    end
  end
  local c = 0xFFFFFFFF
  local bytes = tvb:range(off, n):bytes()
  for i = 0, n - 1 do
    c = B.bxor(crc_table[B.band(B.bxor(c, bytes:get_index(i)), 0xFF)], B.rshift(c, 8))
  end
  c = B.bxor(c, 0xFFFFFFFF)
  if c < 0 then c = c + 4294967296 end
  return c
end

function netvm.dissector(tvb, pinfo, tree)
  local n = tvb:captured_len()
  pinfo.cols.protocol = "NETVM"
  local t = tree:add(netvm, tvb())
  if n < 4 then
    t:add_proto_expert_info(e_short)
    return
  end
  t:add(f.switch, tvb(0, 1))
  t:add(f.port, tvb(1, 1))
  t:add(f.dir, tvb(2, 1))
  local port = tvb(1, 1):uint()
  local off = 4
  local rt = t:add(netvm, tvb(off, 0), "Route")
  rt:set_text("Route")
  local route = {}
  while off < n and tvb(off, 1):uint() >= 0x80 do
    local r = rt:add(f.route, tvb(off, 1))
    r:add(f.rport, tvb(off, 1))
    table.insert(route, string.format("%02x", tvb(off, 1):uint()))
    off = off + 1
  end
  rt:set_len(off - 4)
  rt:append_text(": " .. (#route > 0 and table.concat(route, " ") or "(none)"))
  t:add(f.nroute, #route)
  if n - off < 8 + 4 then
    t:add_proto_expert_info(e_short)
    pinfo.cols.info = string.format("port %d: runt frame", port)
    return
  end
  local ty = tvb(off, 1):uint()
  local src, dst, len = tvb(off + 2, 2):uint(), tvb(off + 4, 2):uint(),
                        tvb(off + 6, 2):uint()
  local h = t:add(netvm, tvb(off, 8), "Header")
  h:set_text("Header")
  h:add(f.type, tvb(off, 1))
  h:add(f.version, tvb(off + 1, 1))
  h:add(f.src, tvb(off + 2, 2))
  h:add(f.dst, tvb(off + 4, 2))
  local li = h:add(f.len, tvb(off + 6, 2))
  pinfo.cols.src = "node" .. src
  pinfo.cols.dst = "node" .. dst
  local info = string.format("port %d: %d -> %d %s len %d", port, src, dst,
                             ptypes[ty] or string.format("type 0x%02x", ty), len)
  if #route > 0 then info = info .. " route " .. table.concat(route, "") end
  if off + 8 + len + 4 ~= n then
    li:add_proto_expert_info(e_len)
    pinfo.cols.info = info .. " [bad length]"
    if off + 8 + len + 4 > n then return end
  end
  if len > 0 then
    local p = t:add(f.payload, tvb(off + 8, len))
    if ty == 2 and len >= 32 then
      local q = off + 8
      p:add(f.op, tvb(q, 1))
      p:add(f.flags, tvb(q + 1, 1))
      p:add(f.sport, tvb(q + 2, 2))
      p:add(f.dport, tvb(q + 4, 2))
      p:add(f.status, tvb(q + 6, 2))
      p:add(f.sepoch, tvb(q + 8, 4))
      p:add(f.depoch, tvb(q + 12, 4))
      p:add(f.seq, tvb(q + 16, 4))
      p:add(f.ack, tvb(q + 20, 4))
      p:add(f.req, tvb(q + 24, 4))
      info = info .. string.format(" %s seq %d ack %d",
                                   netops[tvb(q, 1):uint()] or "op?",
                                   tvb(q + 16, 4):uint(), tvb(q + 20, 4):uint())
    end
  end
  local crc_off = off + 8 + len
  local want = tvb(crc_off, 4):uint()
  local ci = t:add(f.crc, tvb(crc_off, 4))
  local got = crc32(tvb, off, 8 + len)
  if got == nil then
    t:add(f.crcst, 2)
  elseif got == want then
    t:add(f.crcst, 1)
  else
    t:add(f.crcst, 0)
    ci:add_proto_expert_info(e_crc, string.format("Bad CRC (computed 0x%08x)", got))
    info = info .. " [bad CRC]"
  end
  pinfo.cols.info = info
end

DissectorTable.get("wtap_encap"):add((wtap_encaps or wtap).USER0, netvm)

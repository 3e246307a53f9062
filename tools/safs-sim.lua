-- Wireshark / tshark dissector for the "SFS1" header that safs-sim's packet
-- captures (`safs-sim run --pcap`) put after each frame's TCP or UDP header:
-- the simulator's own fields for every packet (flow, sequence, the
-- transport's header words). Layout (big-endian), as docs/traces.md gives it:
--   0  magic "SFS1"        4  kind (0 data, 1 control)   5  message type
--   6  priority (0-7)      7  flags (1 ECT, 2 CE, 4 ECE)  8  flow id (u32)
--   12 payload bytes (u32) 16 sequence (u64)             24 ACK (u64)
--   32 header words 0-3 (u64 each)
-- Use: tshark -X lua_script:tools/safs-sim.lua -r run.pcap -Y safs
--      (Wireshark: copy it into the personal plugins folder).

local safs = Proto("safs", "safs-sim packet header")

local kinds = { [0] = "data", [1] = "control" }
local f = {
  kind = ProtoField.uint8("safs.kind", "Kind", base.DEC, kinds),
  message = ProtoField.uint8("safs.message_type", "Message type", base.DEC),
  priority = ProtoField.uint8("safs.priority", "Priority", base.DEC),
  flags = ProtoField.uint8("safs.flags", "Flags", base.HEX),
  ect = ProtoField.bool("safs.flags.ect", "ECN capable", 8, nil, 0x01),
  ce = ProtoField.bool("safs.flags.ce", "Congestion experienced", 8, nil, 0x02),
  ece = ProtoField.bool("safs.flags.ece", "ECN echo", 8, nil, 0x04),
  flow = ProtoField.uint32("safs.flow", "Flow", base.DEC),
  payload = ProtoField.uint32("safs.payload_bytes", "Payload bytes", base.DEC),
  seq = ProtoField.uint64("safs.seq", "Sequence (byte offset)", base.DEC),
  ack = ProtoField.uint64("safs.ack", "ACK (next byte expected)", base.DEC),
  words = {},
}
for i = 0, 3 do
  f.words[i] = ProtoField.uint64("safs.word" .. i, "Header word " .. i, base.HEX)
end
safs.fields = { f.kind, f.message, f.priority, f.flags, f.ect, f.ce, f.ece, f.flow, f.payload,
                f.seq, f.ack, f.words[0], f.words[1], f.words[2], f.words[3] }

local SHIM_BYTES = 64

local function dissect(buffer, pinfo, tree)
  if buffer:len() < SHIM_BYTES or buffer(0, 4):string() ~= "SFS1" then return false end
  pinfo.cols.protocol = "SAFS-SIM"
  local t = tree:add(safs, buffer(0, SHIM_BYTES))
  t:add(f.kind, buffer(4, 1))
  t:add(f.message, buffer(5, 1))
  t:add(f.priority, buffer(6, 1))
  local flags = t:add(f.flags, buffer(7, 1))
  flags:add(f.ect, buffer(7, 1))
  flags:add(f.ce, buffer(7, 1))
  flags:add(f.ece, buffer(7, 1))
  t:add(f.flow, buffer(8, 4))
  t:add(f.payload, buffer(12, 4))
  t:add(f.seq, buffer(16, 8))
  t:add(f.ack, buffer(24, 8))
  for i = 0, 3 do t:add(f.words[i], buffer(32 + 8 * i, 8)) end
  local kind = kinds[buffer(4, 1):uint()] or "?"
  pinfo.cols.info = string.format("flow %d %s seq %s len %d", buffer(8, 4):uint(), kind,
                                  tostring(buffer(16, 8):uint64()), buffer(12, 4):uint())
  return true
end

function safs.dissector(buffer, pinfo, tree) return dissect(buffer, pinfo, tree) end
safs:register_heuristic("tcp", dissect)
safs:register_heuristic("udp", dissect)

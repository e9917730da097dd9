#include "cluster/scaleout/read_layout.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cluster/scaleout/ifs_state.h"
#include "cluster/scaleout/protection_policy.h"
#include "cluster/scaleout/unit_codec.h"
#include "fs/call/codec.h"
#include "util/byte_io.h"

namespace nasd::scaleout {
namespace {

constexpr uint8_t kLayoutVersion = 1;

bool overlaps(uint64_t lo, uint64_t len, uint64_t offset, uint32_t length) {
  return len > 0 && lo < offset + length && offset < lo + len;
}

void put_record(util::ByteWriter& w, const GroupRecord& g) {
  w.u64(g.file); w.u64(g.group); w.u64(g.version); w.u64(g.offset); w.u64(g.length);
  w.u8(uint8_t(g.shape.data)); w.u8(uint8_t(g.shape.parity)); w.u8(uint8_t(g.shape.per_node));
  w.u8(g.shape.under_protected ? 1 : 0);
  for (const UnitPlace& p : g.places) { w.u32(p.node); w.u16(uint16_t(p.drive)); }
}

bool get_record(util::ByteReader& r, GroupRecord* g) {
  uint8_t data = 0, parity = 0, per_node = 0, under = 0;
  if (!r.u64(&g->file) || !r.u64(&g->group) || !r.u64(&g->version) || !r.u64(&g->offset) ||
      !r.u64(&g->length) || !r.u8(&data) || !r.u8(&parity) || !r.u8(&per_node) || !r.u8(&under))
    return false;
  if (data < 1 || data > kMaxData || parity > kMaxParity || per_node > kMaxData + kMaxParity ||
      under > 1 || g->length == 0 || g->length > uint64_t(data) * kStripeUnit ||
      g->offset > (1ull << 62))
    return r.fail("layout: bad group record");
  g->shape.data = data;
  g->shape.parity = parity;
  g->shape.per_node = per_node;
  g->shape.under_protected = under != 0;
  g->places.resize(size_t(data) + parity);
  for (UnitPlace& p : g->places) {
    uint16_t drive = 0;
    if (!r.u32(&p.node) || !r.u16(&drive)) return false;
    if (drive >= kMaxDrivesPerNode) return r.fail("layout: drive out of range");
    p.drive = drive;
  }
  return true;
}

}  // namespace

std::vector<uint8_t> encode_layout_request(const LayoutRequest& r) {
  fs::call::VolumeRequest req;
  req.volume_id = r.volume_id;
  req.ctx.cred = r.ctx.cred;
  req.args = fs::call::ReadArgs{r.id, r.offset, r.count};
  util::ByteWriter w;
  w.u8(kLayoutVersion);
  fs::call::write_request(w, req);
  return w.take();
}

bool decode_layout_request(std::span<const uint8_t> in, LayoutRequest* out) {
  util::ByteReader r(in);
  uint8_t version = 0;
  fs::call::VolumeRequest req;
  if (!r.u8(&version) || version != kLayoutVersion || !fs::call::read_request(r, &req) ||
      !r.expect_end())
    return false;
  const auto* read = std::get_if<fs::call::ReadArgs>(&req.args);
  if (!read || read->count > kMaxLayoutBytes) return false;
  out->volume_id = req.volume_id;
  out->ctx = fs::OpContext{};
  out->ctx.cred = req.ctx.cred;
  out->id = read->id;
  out->offset = read->offset;
  out->count = read->count;
  return true;
}

std::vector<uint8_t> encode_layout_reply(const ReadLayout& l) {
  fs::call::VolumeReply head;
  head.op = fs::call::VolumeOp::Read;
  head.status = l.status;
  fs::call::ReadResult rr;
  rr.eof = l.eof;
  rr.attr = l.attr;
  head.result = std::move(rr);
  util::ByteWriter w;
  w.u8(kLayoutVersion);
  fs::call::write_reply(w, head);
  w.u64(l.offset);
  w.u32(l.length);
  w.u32(uint32_t(l.pieces.size()));
  for (const LayoutPiece& p : l.pieces) {
    w.u64(p.offset);
    w.bytes(p.bytes);
  }
  w.u32(uint32_t(l.records.size()));
  for (const GroupRecord& g : l.records) put_record(w, g);
  return w.take();
}

bool decode_layout_reply(std::span<const uint8_t> in, ReadLayout* out) {
  util::ByteReader r(in);
  uint8_t version = 0;
  fs::call::VolumeReply head;
  if (!r.u8(&version) || version != kLayoutVersion ||
      !fs::call::read_reply(r, fs::call::VolumeOp::Read, &head))
    return false;
  ReadLayout l;
  l.status = head.status;
  if (const auto* rr = std::get_if<fs::call::ReadResult>(&head.result)) {
    if (!rr->data.empty()) return false;
    l.eof = rr->eof;
    l.attr = rr->attr;
  }
  uint32_t pieces = 0, records = 0;
  if (!r.u64(&l.offset) || !r.u32(&l.length) || l.length > kMaxLayoutBytes ||
      l.offset > (1ull << 62) || !r.u32(&pieces) || pieces > kMaxLayoutPieces)
    return false;
  for (uint32_t i = 0; i < pieces; i++) {
    LayoutPiece p;
    std::span<const uint8_t> bytes;
    if (!r.u64(&p.offset) || !r.bytes(&bytes, kSlotBytes)) return false;
    if (p.offset < l.offset || p.offset - l.offset > l.length ||
        bytes.size() > l.length - (p.offset - l.offset))
      return false;
    p.bytes.assign(bytes.begin(), bytes.end());
    l.pieces.push_back(std::move(p));
  }
  if (!r.u32(&records) || records > kMaxLayoutRecords) return false;
  for (uint32_t i = 0; i < records; i++) {
    GroupRecord g;
    if (!get_record(r, &g) || !overlaps(g.offset, g.length, l.offset, l.length)) return false;
    l.records.push_back(std::move(g));
  }
  if (!r.expect_end()) return false;
  *out = std::move(l);
  return true;
}

bool assemble_read(const ReadLayout& l, const std::vector<std::span<const uint8_t>>& groups,
                   std::vector<uint8_t>* out) {
  if (groups.size() != l.records.size()) return false;
  out->assign(l.length, 0);
  const uint64_t end = l.offset + l.length;
  for (size_t i = 0; i < l.records.size(); i++) {
    const GroupRecord& g = l.records[i];
    if (groups[i].size() < g.length) return false;
    const uint64_t from = std::max(g.offset, l.offset), to = std::min(end, g.offset + g.length);
    if (to > from)
      std::memcpy(out->data() + (from - l.offset), groups[i].data() + (from - g.offset), to - from);
  }
  for (const LayoutPiece& p : l.pieces)
    if (!p.bytes.empty()) std::memcpy(out->data() + (p.offset - l.offset), p.bytes.data(), p.bytes.size());
  return true;
}

int fuzz_layout_codec(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  LayoutRequest req;
  if (decode_layout_request(in, &req)) {
    std::vector<uint8_t> once = encode_layout_request(req);
    LayoutRequest again;
    if (!decode_layout_request(once, &again) || encode_layout_request(again) != once) std::abort();
  }
  ReadLayout l;
  if (decode_layout_reply(in, &l)) {
    std::vector<uint8_t> once = encode_layout_reply(l);
    ReadLayout again;
    if (!decode_layout_reply(once, &again) || encode_layout_reply(again) != once) std::abort();
    static const std::vector<uint8_t> ones(1u << 20, 1);
    std::vector<std::span<const uint8_t>> groups;
    for (const GroupRecord& g : l.records)
      groups.emplace_back(ones.data(), g.length > ones.size() ? 0 : g.length);
    std::vector<uint8_t> out;
    assemble_read(l, groups, &out);
  }
  return 0;
}

}  // namespace nasd::scaleout

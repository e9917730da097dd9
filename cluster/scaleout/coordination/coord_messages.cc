#include "cluster/scaleout/coordination/coord_messages.h"

namespace nasd::scaleout::coord {

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::Create: return "CREATE";
    case OpKind::Mkdir: return "MKDIR";
    case OpKind::Remove: return "REMOVE";
    case OpKind::Rmdir: return "RMDIR";
    case OpKind::Link: return "LINK";
    case OpKind::Rename: return "RENAME";
    case OpKind::Write: return "WRITE";
    case OpKind::Read: return "READ";
  }
  return "?";
}

Slot op_slot(const ClientOp& op) {
  switch (op.kind) {
    case OpKind::Write:
    case OpKind::Read: return slot_of(op.ino);
    default: return slot_of(op.dir);
  }
}

const char* msg_kind_name(Msg::Kind k) {
  static const char* const names[] = {
      "Heartbeat", "Open", "OpenReply", "Put", "PutReply", "UnitPut", "UnitReply",
      "MirrorAppend", "MirrorReply", "ReadJournal", "JournalReply", "Prepare", "Vote",
      "Decide", "Decided", "Query", "TokenRequest", "Grant", "Revoke", "Released", "Record",
      "Recorded", "Lookup", "LookedUp"};
  const auto i = static_cast<size_t>(k);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "?";
}

Msg answer(const Msg& m, Msg::Kind kind) {
  Msg r;
  r.kind = kind;
  r.from = m.to;
  r.to = m.from;
  r.request = m.request;
  r.slot = m.slot;
  r.epoch = m.epoch;
  r.tx = m.tx;
  r.manager = m.manager;
  r.file = m.file;
  r.group = m.group;
  r.version = m.version;
  r.stamp = m.stamp;
  r.name = m.name;
  return r;
}

bool serve_storage(const Msg& m, NodeStorage& storage, Msg* reply) {
  Msg r = answer(m, m.kind);
  switch (m.kind) {
    case Msg::Kind::Open:
      r.kind = Msg::Kind::OpenReply;
      r.ok = storage.store.open(m.slot, m.epoch, &r.recs);
      break;
    case Msg::Kind::Put:
      r.kind = Msg::Kind::PutReply;
      r.ok = storage.store.put_records(m.slot, m.epoch, m.recs);
      break;
    case Msg::Kind::UnitPut:
      r.kind = Msg::Kind::UnitReply;
      r.unit = m.unit;
      r.ok = storage.store.put_unit(m.slot, m.epoch, m.unit);
      break;
    case Msg::Kind::MirrorAppend:
      r.kind = Msg::Kind::MirrorReply;
      r.request = m.jrec.seq;
      r.slot = m.jrec.slot;
      r.ok = storage.mirrors[m.jrec.origin].append(m.jrec);
      break;
    case Msg::Kind::ReadJournal:
      r.kind = Msg::Kind::JournalReply;
      r.origin = m.origin;
      r.stamp = m.stamp;
      r.jrecs = storage.mirrors[m.origin].close_and_read(m.slot, m.stamp, m.writes_only);
      r.ok = true;
      break;
    default:
      return false;
  }
  *reply = std::move(r);
  return true;
}

}  // namespace nasd::scaleout::coord

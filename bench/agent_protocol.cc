#include "bench/agent_protocol.h"

#include <bit>
#include <cmath>

#include "bench/histogram.h"
#include "bench/target.h"
#include "util/byte_io.h"

namespace nasd::bench::agent {

namespace {

using util::ByteReader;
using util::ByteWriter;

ByteWriter start(MessageType type) {
  ByteWriter w;
  w.u8(static_cast<uint8_t>(type));
  return w;
}

void f64(ByteWriter& w, double v) { w.u64(std::bit_cast<uint64_t>(v)); }

// Every double on the wire is finite and inside [lo, hi].
bool f64(ByteReader& r, double* out, double lo, double hi, const char* what) {
  uint64_t bits;
  if (!r.u64(&bits)) return false;
  double v = std::bit_cast<double>(bits);
  if (!std::isfinite(v) || v < lo || v > hi) return r.fail(std::string(what) + " out of range");
  *out = v;
  return true;
}

bool u32_in(ByteReader& r, uint32_t* out, uint32_t lo, uint32_t hi, const char* what) {
  uint32_t v;
  if (!r.u32(&v)) return false;
  if (v < lo || v > hi) return r.fail(std::string(what) + " " + std::to_string(v) + " out of range");
  *out = v;
  return true;
}

bool text(ByteReader& r, std::string* out, size_t max, const char* what) {
  std::string_view s;
  if (!r.string(&s, max)) return r.fail(std::string(what) + ": " + r.error());
  *out = std::string(s);
  return true;
}

bool begin(ByteReader& r, MessageType type) {
  uint8_t t;
  if (!r.u8(&t)) return false;
  if (t != static_cast<uint8_t>(type)) return r.fail("unexpected message type " + std::to_string(t));
  return true;
}

bool finish(ByteReader& r, std::string* error) {
  if (r.ok()) r.expect_end();
  if (!r.ok()) {
    *error = r.error();
    return false;
  }
  return true;
}

void put_facts(ByteWriter& w, const ServerFacts& f) {
  w.u32(f.rtmax);
  w.u32(f.wtmax);
  w.u32(f.dtpref);
  w.u64(f.maxfilesize);
  w.u64(f.total_bytes);
  w.u64(f.free_bytes);
  w.u64(f.total_files);
  w.u64(f.free_files);
}

bool get_facts(ByteReader& r, ServerFacts* f) {
  return r.u32(&f->rtmax) && r.u32(&f->wtmax) && r.u32(&f->dtpref) && r.u64(&f->maxfilesize) &&
         r.u64(&f->total_bytes) && r.u64(&f->free_bytes) && r.u64(&f->total_files) && r.u64(&f->free_files);
}

void put_histogram(ByteWriter& w, const LatencyHistogram& h) {
  LatencyHistogram::Parts p = h.parts();
  w.u64(p.count);
  w.u64(p.sum_ns);
  w.i64(p.min_ns);
  w.i64(p.max_ns);
  w.u32(static_cast<uint32_t>(p.buckets.size()));
  for (const auto& [index, n] : p.buckets) {
    w.u32(index);
    w.u64(n);
  }
}

bool get_histogram(ByteReader& r, LatencyHistogram* h) {
  LatencyHistogram::Parts p;
  uint32_t n;
  if (!r.u64(&p.count) || !r.u64(&p.sum_ns) || !r.i64(&p.min_ns) || !r.i64(&p.max_ns) ||
      !u32_in(r, &n, 0, static_cast<uint32_t>(LatencyHistogram::bucket_count()), "histogram bucket count")) {
    return false;
  }
  // Each bucket takes 12 bytes: a count larger than what is left is refused before reserving.
  if (static_cast<size_t>(n) * 12 > r.remaining()) return r.fail("histogram truncated");
  p.buckets.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t index;
    uint64_t count;
    if (!r.u32(&index) || !r.u64(&count)) return false;
    p.buckets.emplace_back(index, count);
  }
  if (!h->restore(p)) return r.fail("histogram inconsistent");
  return true;
}

void put_counters(ByteWriter& w, const OpCounters& c) {
  w.u64(c.ok);
  w.u64(c.errors);
  w.u64(c.bytes);
  w.u32(static_cast<uint32_t>(c.errors_by_status.size()));
  for (const auto& [status, n] : c.errors_by_status) {
    w.u32(static_cast<uint32_t>(status));
    w.u64(n);
  }
  put_histogram(w, c.latency);
}

bool get_counters(ByteReader& r, OpCounters* c) {
  uint32_t statuses;
  if (!r.u64(&c->ok) || !r.u64(&c->errors) || !r.u64(&c->bytes) ||
      !u32_in(r, &statuses, 0, kMaxStatuses, "error status count")) {
    return false;
  }
  uint64_t errors = 0;
  for (uint32_t i = 0; i < statuses; ++i) {
    uint32_t status;
    uint64_t n;
    if (!r.u32(&status) || !r.u64(&n)) return false;
    int s = static_cast<int>(status);
    if (s == 0 || n == 0 || c->errors_by_status.count(s)) return r.fail("error status list malformed");
    if (errors + n < errors) return r.fail("error counts overflow");
    errors += n;
    c->errors_by_status[s] = n;
  }
  if (errors != c->errors) return r.fail("error counts do not add up");
  if (!get_histogram(r, &c->latency)) return false;
  if (c->latency.count() != c->ok) return r.fail("latency count differs from ok count");
  return true;
}

}  // namespace

std::vector<uint8_t> encode(const Prepare& m) {
  ByteWriter w = start(MessageType::kPrepare);
  w.u32(m.agent_index);
  w.u32(m.agents);
  w.u32(static_cast<uint32_t>(m.targets.size()));
  for (const std::string& t : m.targets) w.string(t);
  w.string(m.workdir);
  w.u32(m.processes);
  w.u32(m.max_in_flight);
  w.u32(m.io_size);
  w.u32(m.timeout_ms);
  w.u64(m.seed);
  w.string(m.mix_name);
  for (double p : m.mix_percent) f64(w, p);
  w.u32(m.files_per_dir);
  f64(w, m.mib_per_op);
  f64(w, m.peak_ops);
  w.u32(static_cast<uint32_t>(m.file_sizes.size()));
  for (const FileSizeBucket& b : m.file_sizes) {
    w.u64(b.bytes);
    f64(w, b.percent);
  }
  return w.take();
}

bool decode(std::span<const uint8_t> in, Prepare* out, std::string* error) {
  ByteReader r(in);
  Prepare m;
  uint32_t targets = 0, sizes = 0;
  if (begin(r, MessageType::kPrepare) && r.u32(&m.agent_index) && u32_in(r, &m.agents, 1, 65536, "agents") &&
      (m.agent_index < m.agents || r.fail("agent index out of range")) &&
      u32_in(r, &targets, 1, kMaxTargets, "target count")) {
    for (uint32_t i = 0; i < targets && r.ok(); ++i) {
      std::string t;
      if (!text(r, &t, kMaxTargetText, "target")) break;
      try {
        (void)parse_target(t);
      } catch (const TargetError& e) {
        r.fail(e.what());
        break;
      }
      m.targets.push_back(std::move(t));
    }
  }
  if (r.ok() && text(r, &m.workdir, kMaxNameText, "workdir") &&
      (m.workdir.empty() || m.workdir == "." || m.workdir == ".." ||
       m.workdir.find_first_of(std::string("/\0", 2)) != std::string::npos)) {
    r.fail("workdir must be one path component");
  }
  if (r.ok() && u32_in(r, &m.processes, 1, kMaxProcesses, "processes") &&
      u32_in(r, &m.max_in_flight, 1, 65536, "max in flight") && u32_in(r, &m.io_size, 1, 1 << 20, "io size") &&
      u32_in(r, &m.timeout_ms, 100, 3600000, "timeout") && r.u64(&m.seed) &&
      text(r, &m.mix_name, kMaxNameText, "mix name")) {
    double total = 0;
    for (double& p : m.mix_percent) {
      if (!f64(r, &p, 0, 100, "mix share")) break;
      total += p;
    }
    if (r.ok() && !(total > 0)) r.fail("mix shares are all 0");
  }
  if (r.ok() && u32_in(r, &m.files_per_dir, 1, 1000000, "files per dir") &&
      f64(r, &m.mib_per_op, 0, 1e6, "MiB per op") && f64(r, &m.peak_ops, 1e-6, 1e9, "peak ops") &&
      u32_in(r, &sizes, 0, kMaxSizeBuckets, "file size count")) {
    for (uint32_t i = 0; i < sizes && r.ok(); ++i) {
      FileSizeBucket b{};
      if (!r.u64(&b.bytes) || !f64(r, &b.percent, 0, 100, "file size share")) break;
      if (b.bytes == 0 || b.bytes > (uint64_t{1} << 40)) r.fail("file size out of range");
      m.file_sizes.push_back(b);
    }
  }
  if (!finish(r, error)) return false;
  *out = std::move(m);
  return true;
}

std::vector<uint8_t> encode(const Prepared& m) {
  ByteWriter w = start(MessageType::kPrepared);
  w.u32(static_cast<uint32_t>(m.facts.size()));
  for (const ServerFacts& f : m.facts) put_facts(w, f);
  w.u64(m.fileset_bytes_per_target);
  return w.take();
}

bool decode(std::span<const uint8_t> in, Prepared* out, std::string* error) {
  ByteReader r(in);
  Prepared m;
  uint32_t n = 0;
  if (begin(r, MessageType::kPrepared) && u32_in(r, &n, 0, kMaxTargets, "facts count")) {
    for (uint32_t i = 0; i < n && r.ok(); ++i) {
      ServerFacts f;
      if (get_facts(r, &f)) m.facts.push_back(f);
    }
  }
  if (r.ok()) r.u64(&m.fileset_bytes_per_target);
  if (!finish(r, error)) return false;
  *out = std::move(m);
  return true;
}

std::vector<uint8_t> encode_build() { return start(MessageType::kBuild).take(); }

bool decode_build(std::span<const uint8_t> in, std::string* error) {
  ByteReader r(in);
  begin(r, MessageType::kBuild);
  return finish(r, error);
}

std::vector<uint8_t> encode(const Built& m) {
  ByteWriter w = start(MessageType::kBuilt);
  w.u64(m.fileset_bytes);
  f64(w, m.build_seconds);
  return w.take();
}

bool decode(std::span<const uint8_t> in, Built* out, std::string* error) {
  ByteReader r(in);
  Built m;
  if (begin(r, MessageType::kBuilt) && r.u64(&m.fileset_bytes)) f64(r, &m.build_seconds, 0, 1e9, "build seconds");
  if (!finish(r, error)) return false;
  *out = m;
  return true;
}

std::vector<uint8_t> encode(const ClockProbe& m) {
  ByteWriter w = start(MessageType::kClockProbe);
  w.u64(m.nonce);
  return w.take();
}

bool decode(std::span<const uint8_t> in, ClockProbe* out, std::string* error) {
  ByteReader r(in);
  ClockProbe m;
  if (begin(r, MessageType::kClockProbe)) r.u64(&m.nonce);
  if (!finish(r, error)) return false;
  *out = m;
  return true;
}

std::vector<uint8_t> encode(const ClockReply& m) {
  ByteWriter w = start(MessageType::kClockReply);
  w.u64(m.nonce);
  w.i64(m.agent_now_ns);
  return w.take();
}

bool decode(std::span<const uint8_t> in, ClockReply* out, std::string* error) {
  ByteReader r(in);
  ClockReply m;
  if (begin(r, MessageType::kClockReply) && r.u64(&m.nonce)) r.i64(&m.agent_now_ns);
  if (!finish(r, error)) return false;
  *out = m;
  return true;
}

std::vector<uint8_t> encode(const Step& m) {
  ByteWriter w = start(MessageType::kStep);
  w.u32(m.index);
  w.i64(m.start_ns);
  w.i64(m.warmup_ns);
  w.i64(m.measure_ns);
  f64(w, m.ops_per_sec);
  return w.take();
}

bool decode(std::span<const uint8_t> in, Step* out, std::string* error) {
  ByteReader r(in);
  Step m;
  if (begin(r, MessageType::kStep) && u32_in(r, &m.index, 0, 100000, "step index") && r.i64(&m.start_ns) &&
      r.i64(&m.warmup_ns) && r.i64(&m.measure_ns) && f64(r, &m.ops_per_sec, 1e-6, 1e9, "step rate")) {
    if (m.start_ns < 0) r.fail("step start out of range");
    if (m.warmup_ns < 0 || m.warmup_ns > kMaxStepNs) r.fail("warmup out of range");
    if (m.measure_ns < 100000000 || m.measure_ns > kMaxStepNs) r.fail("measured time out of range");
  }
  if (!finish(r, error)) return false;
  *out = m;
  return true;
}

std::vector<uint8_t> encode(const StepDone& m) {
  ByteWriter w = start(MessageType::kStepDone);
  w.u32(m.index);
  w.i64(m.first_issue_ns);
  w.u64(m.refused);
  w.string(m.failure.substr(0, kMaxText));
  w.u64(m.stats.issued);
  w.u64(m.stats.late_issues);
  for (const OpCounters& c : m.stats.per_op) put_counters(w, c);
  return w.take();
}

bool decode(std::span<const uint8_t> in, StepDone* out, std::string* error) {
  ByteReader r(in);
  StepDone m;
  if (begin(r, MessageType::kStepDone) && u32_in(r, &m.index, 0, 100000, "step index") &&
      r.i64(&m.first_issue_ns) && r.u64(&m.refused) && text(r, &m.failure, kMaxText, "failure") &&
      r.u64(&m.stats.issued) && r.u64(&m.stats.late_issues)) {
    for (OpCounters& c : m.stats.per_op) {
      if (!get_counters(r, &c)) break;
    }
  }
  if (!finish(r, error)) return false;
  *out = std::move(m);
  return true;
}

std::vector<uint8_t> encode(const Finish& m) {
  ByteWriter w = start(MessageType::kFinish);
  w.boolean(m.cleanup);
  return w.take();
}

bool decode(std::span<const uint8_t> in, Finish* out, std::string* error) {
  ByteReader r(in);
  Finish m;
  if (begin(r, MessageType::kFinish)) r.boolean(&m.cleanup);
  if (!finish(r, error)) return false;
  *out = m;
  return true;
}

std::vector<uint8_t> encode(const Finished& m) {
  ByteWriter w = start(MessageType::kFinished);
  w.string(m.cleanup_error.substr(0, kMaxText));
  return w.take();
}

bool decode(std::span<const uint8_t> in, Finished* out, std::string* error) {
  ByteReader r(in);
  Finished m;
  if (begin(r, MessageType::kFinished)) text(r, &m.cleanup_error, kMaxText, "cleanup error");
  if (!finish(r, error)) return false;
  *out = std::move(m);
  return true;
}

std::vector<uint8_t> encode(const Error& m) {
  ByteWriter w = start(MessageType::kError);
  w.string(m.message.substr(0, kMaxText));
  return w.take();
}

bool decode(std::span<const uint8_t> in, Error* out, std::string* error) {
  ByteReader r(in);
  Error m;
  if (begin(r, MessageType::kError)) text(r, &m.message, kMaxText, "error text");
  if (!finish(r, error)) return false;
  *out = std::move(m);
  return true;
}

bool peek_type(std::span<const uint8_t> message, MessageType* type) {
  if (message.empty() || message[0] < 1 || message[0] > static_cast<uint8_t>(MessageType::kError)) return false;
  *type = static_cast<MessageType>(message[0]);
  return true;
}

}  // namespace nasd::bench::agent

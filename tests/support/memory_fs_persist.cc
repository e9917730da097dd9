// TEST FIXTURE ONLY (see memory_fs.h): the durable state as a file, so that a MemoryFs survives
// a SIGKILL of the process that owns it. The format is raw host-order fields: it is only ever
// read back by the same test binary on the same machine.
#include "tests/support/memory_fs.h"

#include <cstdio>
#include <fstream>
#include <type_traits>

namespace nasd::test_support {

namespace {

static_assert(std::is_trivially_copyable_v<fs::Attr>, "Attr is written as raw bytes");

template <typename T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_bytes(std::string& out, const void* p, uint64_t n) {
  put(out, n);
  out.append(static_cast<const char*>(p), n);
}
template <typename T>
bool get(std::istream& in, T* v) {
  return static_cast<bool>(in.read(reinterpret_cast<char*>(v), sizeof *v));
}
// Strings and file data: a length, then the bytes (a length past 1 GiB means a torn file).
template <typename Bytes>
bool get_bytes(std::istream& in, Bytes* s) {
  uint64_t n;
  if (!get(in, &n) || n > (1u << 30)) return false;
  s->resize(n);
  return static_cast<bool>(in.read(reinterpret_cast<char*>(s->data()), std::streamsize(n)));
}

}  // namespace

void MemoryFs::save(const State& s) const {
  std::string out;
  put(out, s.next_ino);
  put(out, s.applied_seq);
  put(out, s.clock);
  put(out, uint64_t(s.nodes.size()));
  for (const auto& [ino, n] : s.nodes) {
    put(out, ino);
    put(out, n.attr);
    put(out, n.gen);
    put(out, n.parent);
    put(out, n.create_verf);
    put_bytes(out, n.data.data(), n.data.size());
    put_bytes(out, n.target.data(), n.target.size());
    put(out, uint64_t(n.children.size()));
    for (const auto& [name, child] : n.children) {
      put_bytes(out, name.data(), name.size());
      put(out, child);
    }
  }
  // Write then rename, so that a kill mid-save leaves the previous durable state intact.
  const std::string tmp = options_.persist_path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(out.data(), std::streamsize(out.size()));
  }
  std::rename(tmp.c_str(), options_.persist_path.c_str());
}

bool MemoryFs::load(State* s) const {
  std::ifstream f(options_.persist_path, std::ios::binary);
  if (!f) return false;
  State st;
  uint64_t count;
  if (!get(f, &st.next_ino) || !get(f, &st.applied_seq) || !get(f, &st.clock) || !get(f, &count))
    return false;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t ino, children;
    Node n;
    if (!get(f, &ino) || !get(f, &n.attr) || !get(f, &n.gen) || !get(f, &n.parent) ||
        !get(f, &n.create_verf) || !get_bytes(f, &n.data) || !get_bytes(f, &n.target) ||
        !get(f, &children))
      return false;
    for (uint64_t c = 0; c < children; ++c) {
      std::string name;
      uint64_t child;
      if (!get_bytes(f, &name) || !get(f, &child)) return false;
      n.children.emplace(std::move(name), child);
    }
    st.nodes[ino] = std::move(n);
  }
  *s = std::move(st);
  return true;
}

}  // namespace nasd::test_support

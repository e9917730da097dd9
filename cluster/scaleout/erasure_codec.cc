#include "cluster/scaleout/erasure_codec.h"

#include <isa-l/erasure_code.h>

#include <algorithm>
#include <set>

namespace nasd::scaleout {

ErasureCodec::ErasureCodec(int data, int parity) : k_(data), m_(parity) {
  const int rows = k_ + m_;
  matrix_.resize(static_cast<size_t>(rows) * k_);
  gf_gen_cauchy1_matrix(matrix_.data(), rows, k_);
  // One data unit: parity rows of ones make every parity unit an exact copy (a mirror), and
  // any single row of ones is still invertible.
  if (k_ == 1) std::fill(matrix_.begin(), matrix_.end(), uint8_t{1});
  if (m_ > 0) {
    tables_.resize(static_cast<size_t>(32) * k_ * m_);
    ec_init_tables(k_, m_, matrix_.data() + static_cast<size_t>(k_) * k_, tables_.data());
  }
}

void ErasureCodec::encode(size_t len, const uint8_t* const* data, uint8_t* const* parity) const {
  if (m_ == 0 || len == 0) return;
  ec_encode_data(static_cast<int>(len), k_, m_, const_cast<uint8_t*>(tables_.data()),
                 const_cast<uint8_t**>(data), const_cast<uint8_t**>(parity));
}

bool ErasureCodec::reconstruct(size_t len, uint8_t* const* units, const std::vector<int>& missing,
                               std::string* error) const {
  const int rows = k_ + m_;
  std::set<int> gone;
  for (int i : missing) {
    if (i < 0 || i >= rows || !gone.insert(i).second) {
      *error = "bad missing unit index " + std::to_string(i);
      return false;
    }
  }
  if (gone.empty()) return true;
  if (static_cast<int>(gone.size()) > m_) {
    *error = std::to_string(gone.size()) + " units missing, parity covers " + std::to_string(m_);
    return false;
  }
  // The first k surviving units and their generator rows.
  std::vector<int> survivors;
  for (int i = 0; i < rows && static_cast<int>(survivors.size()) < k_; ++i) {
    if (!gone.count(i)) survivors.push_back(i);
  }
  std::vector<uint8_t> sub(static_cast<size_t>(k_) * k_), inv(static_cast<size_t>(k_) * k_);
  for (int r = 0; r < k_; ++r) {
    std::copy_n(matrix_.data() + static_cast<size_t>(survivors[r]) * k_, k_,
                sub.data() + static_cast<size_t>(r) * k_);
  }
  if (gf_invert_matrix(sub.data(), inv.data(), k_) != 0) {
    *error = "generator submatrix not invertible";  // cannot happen with a Cauchy matrix
    return false;
  }
  // Row for missing unit j, as a combination of the survivors: generator row j times inv.
  const std::vector<int> lost(gone.begin(), gone.end());
  const int nlost = static_cast<int>(lost.size());
  std::vector<uint8_t> decode(static_cast<size_t>(nlost) * k_);
  for (int r = 0; r < nlost; ++r) {
    const uint8_t* g = matrix_.data() + static_cast<size_t>(lost[r]) * k_;
    for (int c = 0; c < k_; ++c) {
      uint8_t acc = 0;
      for (int t = 0; t < k_; ++t) {
        acc ^= gf_mul(g[t], inv[static_cast<size_t>(t) * k_ + c]);
      }
      decode[static_cast<size_t>(r) * k_ + c] = acc;
    }
  }
  std::vector<uint8_t> tables(static_cast<size_t>(32) * k_ * nlost);
  ec_init_tables(k_, nlost, decode.data(), tables.data());
  std::vector<uint8_t*> src(k_), dst(nlost);
  for (int r = 0; r < k_; ++r) src[r] = units[survivors[r]];
  for (int r = 0; r < nlost; ++r) dst[r] = units[lost[r]];
  if (len > 0) ec_encode_data(static_cast<int>(len), k_, nlost, tables.data(), src.data(), dst.data());
  return true;
}

}  // namespace nasd::scaleout

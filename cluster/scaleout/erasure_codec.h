// Reed-Solomon over GF(2^8) for one group shape, through Intel ISA-L (never hand-written).
//
// The generator is ISA-L's Cauchy matrix (gf_gen_cauchy1_matrix): its first N rows are the
// identity (data units are stored as they are) and every N x N submatrix of it is invertible,
// so any N of the N+M units rebuild the group: any M missing units can be recovered.
// With N = 1 the parity rows are all ones: the "parity" of a one-unit group is a plain copy,
// which is how small files are mirrored M+1 ways with the same code path.
//
// Thread safety: an ErasureCodec is immutable after construction; share it freely.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nasd::scaleout {

class ErasureCodec {
 public:
  // 1 <= data, 0 <= parity, data + parity <= 255 (ISA-L's field).
  ErasureCodec(int data, int parity);

  int data() const { return k_; }
  int parity() const { return m_; }

  // Computes the `parity` units from the `data` units; every pointer covers `len` bytes.
  void encode(size_t len, const uint8_t* const* data, uint8_t* const* parity) const;

  // units[i] points at unit i (0..N+M-1) of `len` bytes; `missing` lists the indexes whose
  // content is unknown (at most M, no duplicates); their buffers are overwritten with the
  // rebuilt content. Returns false with a reason when more than M are missing.
  bool reconstruct(size_t len, uint8_t* const* units, const std::vector<int>& missing,
                   std::string* error) const;

 private:
  int k_, m_;
  std::vector<uint8_t> matrix_;   // (k+m) x k generator
  std::vector<uint8_t> tables_;   // expanded parity rows for ec_encode_data
};

}  // namespace nasd::scaleout

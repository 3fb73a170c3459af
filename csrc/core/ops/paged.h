// nuvec.fast.paged_write and paged_attention (core/primitives/paged.h): validated as OpError, with
// the block ids and slots checked now when their arrays are already evaluated (else by the kernel).
#pragma once
#include <utility>

#include "core/array.h"

namespace nuvec {

// The pools (k_pages, v_pages) with keys (T, Hkv, D) and values (T, Hkv, Dv) stored at slot_mapping.
std::pair<Array, Array> paged_write(const Array& k_pages, const Array& v_pages, const Array& keys, const Array& values,
                                    const Array& slot_mapping, Stream s);

// One query per sequence, (B, Hq, 1, D), over its paged keys; the output has the promoted dtype of
// the queries and the pools, as scaled_dot_product_attention's.
Array paged_attention(const Array& q, const Array& k_pages, const Array& v_pages, const Array& block_tables,
                      const Array& context_lens, float scale, Stream s);

}  // namespace nuvec

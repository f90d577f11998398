#include "distributed/ring_all_reduce.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/check.h"
#include "core/status.h"

namespace mt::distributed::internal {
namespace {

// Adds the bytes of `slices` into the elements at `dst`, one element after another. A
// slice may end inside an element: its first bytes wait in `carry` for the rest.
template <typename T>
void add_slices(T* dst, const std::vector<grpc::Slice>& slices) {
  unsigned char carry[sizeof(T)];
  size_t carried = 0;
  for (const grpc::Slice& slice : slices) {
    const auto* src = reinterpret_cast<const unsigned char*>(slice.begin());
    size_t n = slice.size();
    if (carried > 0) {
      const size_t take = std::min(sizeof(T) - carried, n);
      std::memcpy(carry + carried, src, take);
      carried += take;
      src += take;
      n -= take;
      if (carried < sizeof(T)) continue;
      T v;
      std::memcpy(&v, carry, sizeof(T));
      *dst++ += v;
      carried = 0;
    }
    const size_t whole = n / sizeof(T);
    for (size_t i = 0; i < whole; ++i) {
      T v;
      std::memcpy(&v, src + i * sizeof(T), sizeof(T));  // unaligned: gRPC's buffers
      dst[i] += v;
    }
    dst += whole;
    carried = n - whole * sizeof(T);
    std::memcpy(carry, src + whole * sizeof(T), carried);
  }
}

void add_bytes(DType dtype, void* dst, const std::vector<grpc::Slice>& slices) {
  switch (dtype) {
    case DType::kFloat32:
      return add_slices(static_cast<float*>(dst), slices);
    case DType::kFloat64:
      return add_slices(static_cast<double*>(dst), slices);
    case DType::kInt32:
      return add_slices(static_cast<int32_t*>(dst), slices);
    case DType::kInt64:
      return add_slices(static_cast<int64_t*>(dst), slices);
    default:
      MT_CHECK(false);  // ring_all_reduce checked ring_sums
  }
}

void copy_bytes(char* dst, const std::vector<grpc::Slice>& slices) {
  for (const grpc::Slice& slice : slices) {
    std::memcpy(dst, slice.begin(), slice.size());
    dst += slice.size();
  }
}

// Segment i of n of `elements` elements: [begin, end), as even as can be.
std::pair<int64_t, int64_t> segment(int64_t elements, int n, int i) {
  const auto start = [&](int k) { return elements / n * k + elements % n * k / n; };
  return {start(i), start(i + 1)};
}

int wrap(int i, int n) { return ((i % n) + n) % n; }

class Ring {
 public:
  Ring(RingLinks& links, int rank, int size, DType dtype, void* data, int64_t elements)
      : links_(links),
        rank_(rank),
        size_(size),
        dtype_(dtype),
        element_(dtype_size(dtype)),
        data_(static_cast<char*>(data)),
        elements_(elements) {}

  // One step: sends segment `out` while receiving segment `in`, chunk by chunk, and adds
  // each chunk received in (reduce-scatter) or copies it over (all-gather).
  absl::Status step(uint32_t number, int out, int in, bool add) {
    const auto [out_begin, out_end] = segment(elements_, size_, out);
    const auto [in_begin, in_end] = segment(elements_, size_, in);
    absl::Status sent;
    std::atomic<bool> stop{false};  // the receive failed: send no more chunks
    std::thread sender([&, out_begin = out_begin, out_end = out_end] {
      const int64_t n = out_end - out_begin;
      for (int64_t c = 0; c < chunks(n) && sent.ok() && !stop; ++c) {
        const auto [begin, end] = chunk(n, c);
        sent = links_.send(number, static_cast<uint32_t>(c), what(begin, end, n),
                           data_ + (out_begin + begin) * element_,
                           static_cast<size_t>(end - begin) * element_);
      }
    });
    absl::Status received;
    const int64_t n = in_end - in_begin;
    for (int64_t c = 0; c < chunks(n) && received.ok(); ++c) {
      const auto [begin, end] = chunk(n, c);
      received = take(number, static_cast<uint32_t>(c), what(begin, end, n),
                      data_ + (in_begin + begin) * element_, end - begin, add);
    }
    stop = !received.ok();
    sender.join();
    MT_RETURN_IF_ERROR(sent);
    return received;
  }

  // Receives one chunk of `elements` elements, checks it is what this worker expects, and
  // adds it into (or copies it to) `dst`.
  absl::Status take(uint32_t number, uint32_t c, const std::string& expected, char* dst,
                    int64_t elements, bool add) {
    MT_ASSIGN_OR_RETURN(CollectiveMailbox::Message message, links_.receive(number, c));
    size_t bytes = 0;
    for (const grpc::Slice& s : message.bytes) bytes += s.size();
    if (message.what != expected || bytes != static_cast<size_t>(elements) * element_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "[all_reduce] ", links_.previous_name(), " sent ", message.what, " (", bytes,
          " bytes) where this worker expected ", expected,
          ": every worker must all-reduce values of one shape and dtype, in the same order"));
    }
    if (add) {
      add_bytes(dtype_, dst, message.bytes);
    } else {
      copy_bytes(dst, message.bytes);
    }
    return absl::OkStatus();
  }

  absl::Status run() {
    const int n = size_;
    for (int s = 0; s < n - 1; ++s) {
      MT_RETURN_IF_ERROR(step(s, wrap(rank_ - s, n), wrap(rank_ - s - 1, n), /*add=*/true));
    }
    for (int s = 0; s < n - 1; ++s) {
      MT_RETURN_IF_ERROR(
          step(n - 1 + s, wrap(rank_ + 1 - s, n), wrap(rank_ - s, n), /*add=*/false));
    }
    return absl::OkStatus();
  }

 private:
  // The chunks of a segment of `n` elements: at least one, none over kRingChunkBytes.
  int64_t chunks(int64_t n) const {
    const auto per_chunk = static_cast<int64_t>(kRingChunkBytes / element_);
    return std::max<int64_t>(1, (n + per_chunk - 1) / per_chunk);
  }
  std::pair<int64_t, int64_t> chunk(int64_t n, int64_t c) const {
    const auto per_chunk = static_cast<int64_t>(kRingChunkBytes / element_);
    return {c * per_chunk, std::min(n, (c + 1) * per_chunk)};
  }

  // Describes a chunk, its segment and the whole buffer, so that workers that disagree
  // find out.
  std::string what(int64_t begin, int64_t end, int64_t segment_elements) const {
    return absl::StrCat("elements ", begin, " to ", end, " of a segment of ", segment_elements,
                        " of ", elements_, " ", dtype_name(dtype_));
  }

  RingLinks& links_;
  const int rank_, size_;
  const DType dtype_;
  const size_t element_;
  char* const data_;
  const int64_t elements_;
};

}  // namespace

bool ring_sums(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kInt32 ||
         dtype == DType::kInt64;
}

absl::Status ring_all_reduce(RingLinks& links, int rank, int size, DType dtype, void* data,
                             int64_t elements) {
  MT_CHECK(size >= 1 && rank >= 0 && rank < size && elements >= 0);
  if (!ring_sums(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("[all_reduce] dtype ", dtype_name(dtype),
                     " cannot be all-reduced between workers (float32, float64, int32, int64)"));
  }
  if (size == 1) return absl::OkStatus();
  return Ring(links, rank, size, dtype, data, elements).run();
}

}  // namespace mt::distributed::internal

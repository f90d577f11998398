// read_checkpoint (checkpoint_files.h): every check before any tensor is handed out.
#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/eager/context.h"
#include "runtime/eager/device.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/train/checkpoint_files.h"
#include "runtime/train/crc32c.h"
#include "runtime/train/safetensors.h"

// Note [Checkpoint speed]
// A restore's bytes are copied once: the disk's pages into a new host tensor (pread), which
// a CPU variable then takes as its buffer (assign_restored in checkpoint.cc), instead of
// being copied again into the old one. A save checksums 8 MiB of a CPU tensor and writes it
// while it is in the cache, and the POSIX file starts the disk's writeback of each large
// piece at once (sync_file_range), so the final fsync finds little left to do.
//
// Note [Parallel restore]
// Reading into fresh host memory (a process's first restore) costs as much in page faults
// as in the disk: the kernel zeroes each 4 KiB page when pread first writes it. So a large
// restore reads with several threads (one per core and per 16 MiB, at most kMaxReaders),
// each taking the next 8 MiB piece of the data and reading it straight into its tensor,
// 2 MiB at a time, each 2 MiB checksummed while it is in the CPU's cache (10% faster than
// 8 MiB here): the faults, the copies out of the page cache and the checksums run in
// parallel, and the disk has several requests in flight. Each reader asks the disk for
// the piece it will likely take next (posix_fadvise WILLNEED). A tensor's CRC32C is joined
// from its pieces' (crc32c_combine). Tried and left out: advising the new tensors' memory
// to be huge pages (MADV_HUGEPAGE, one fault per 2 MiB), which stalled a 1 GiB restore for
// 10-30 s at times on a VM (fresh huge pages), and mapping each piece's pages in one call
// before reading (MADV_POPULATE_WRITE), which gave nothing measurable.
//
// Note [Restoring onto devices]
// A GPU variable's tensor is made on its GPU (RestorePlacement) and read there through one
// kStep host buffer per reader: pread into the buffer, checksum it while it is in the
// cache, then copy it to the device (copy_from_host stages it in pinned memory and returns
// once the copy is enqueued, so the next pread overlaps the copy). Reading the whole model
// into CPU:0 first, as before, held it twice in host memory, and on a GPU host CPU:0's pool
// is pinned memory, which a process's first restore had to allocate and pin (cudaHostAlloc
// of the model's size: the first restore ran at 0.45x of a raw read on an H100 host). A
// variable on another CPU device gets its tensor in that device's pool, read in place.
// Bools stay on CPU:0 (their bytes are checked after the read), and so does a tensor
// whose device has no room for a second copy of it (the variable's assignment copies it
// then, as before). The readers wait for their devices' copies before anything is checked.

namespace mt::internal {
namespace {

absl::Status loss(absl::string_view file, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("[checkpoint] ", file, ": ", what));
}

std::string hex32(uint32_t v) { return absl::StrCat("0x", absl::Hex(v, absl::kZeroPad8)); }

constexpr uint64_t kPiece = 8 << 20;  // a reader's unit of work
constexpr uint64_t kStep = 2 << 20;   // read, then checksummed while in the CPU's cache
constexpr uint64_t kBytesPerReader = 16 << 20;
constexpr uint64_t kMaxReaders = 8;

// One piece of a tensor's bytes: where it lies in the file and in the tensor, its CRC32C.
struct Piece {
  uint64_t offset;
  uint64_t size;
  char* dst;
  Device* device;  // non-null: `dst` is this GPU's memory, reached through a host buffer
  uint32_t crc = 0;
  absl::Status status;
};

// Reads piece `p` into its place: straight into host memory, or through `buffer` (kStep
// bytes, allocated at first use) into a device's.
void read_piece(const ReadableFile& data, Piece& p, std::unique_ptr<char[]>& buffer) {
  if (p.device != nullptr && buffer == nullptr) buffer = std::make_unique<char[]>(kStep);
  for (uint64_t done = 0; done < p.size && p.status.ok(); done += kStep) {
    const uint64_t n = std::min(kStep, p.size - done);
    char* into = p.device != nullptr ? buffer.get() : p.dst + done;
    p.status = data.read_at(p.offset + done, n, into);
    if (!p.status.ok()) break;
    p.crc = crc32c_extend(p.crc, into, n);
    if (p.device != nullptr) p.status = p.device->copy_from_host(p.dst + done, into, n);
  }
}

// Reads every piece with up to kMaxReaders threads (Note [Parallel restore]). After it
// returns, each piece holds its bytes and CRC, or the status of its failed read.
void read_pieces(const ReadableFile& data, std::vector<Piece>& pieces, uint64_t total_bytes) {
  const uint64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t readers = static_cast<size_t>(
      std::clamp<uint64_t>(std::min(total_bytes / kBytesPerReader, cores), 1, kMaxReaders));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    std::unique_ptr<char[]> buffer;
    for (size_t i = next++; i < pieces.size() && !failed.load(); i = next++) {
      Piece& p = pieces[i];
      if (const size_t ahead = i + readers; ahead < pieces.size()) {
        data.will_need(pieces[ahead].offset, pieces[ahead].size);
      }
      read_piece(data, p, buffer);
      if (!p.status.ok()) failed = true;
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < readers; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  // The devices' copies are enqueued: wait for them (Note [Restoring onto devices]).
  std::vector<Device*> devices;
  for (const Piece& p : pieces) {
    if (p.device != nullptr &&
        std::find(devices.begin(), devices.end(), p.device) == devices.end()) {
      devices.push_back(p.device);
    }
  }
  for (Device* d : devices) {
    if (absl::Status s = d->wait_idle(); !s.ok() && !pieces.empty()) pieces.front().status = s;
  }
}

// A tensor being read: its layout, the CRC the manifest gives, the new host tensor and
// its pieces' range in the list of pieces.
struct Pending {
  const SafetensorsTensor* layout;
  uint32_t expected_crc;
  Tensor tensor;
  size_t first_piece;
  size_t pieces;
};

// Makes the new tensor of `t` on `device` (a local one; else, or when `device` has no room
// for it, on `host`) and appends its pieces to `pieces`.
absl::StatusOr<Tensor> allocate_for(absl::string_view file, uint64_t data_start,
                                    const SafetensorsTensor& t, Device* device, Device& host,
                                    std::vector<Piece>& pieces) {
  absl::StatusOr<Shape> shape = Shape::make(t.shape);
  if (!shape.ok()) {
    return loss(file, absl::StrCat("tensor '", t.name, "': ", shape.status().message()));
  }
  if (device != nullptr && (device->remote() != nullptr || t.dtype == DType::kBool)) {
    device = nullptr;
  }
  absl::StatusOr<TensorImpl*> impl = absl::ResourceExhaustedError("no device");
  if (device != nullptr) impl = allocate_tensor(*device, t.dtype, *shape);
  if (!impl.ok()) {
    device = &host;
    impl = allocate_tensor(host, t.dtype, *std::move(shape));
  }
  if (!impl.ok()) return impl.status();
  Tensor out(*impl);  // owns the buffer from here on
  char* bytes = static_cast<char*>((*impl)->data);
  Device* through = device->type() == DeviceType::kCPU ? nullptr : device;
  for (uint64_t done = 0; done < t.bytes(); done += kPiece) {
    const uint64_t size = std::min(kPiece, t.bytes() - done);
    pieces.push_back(
        {data_start + t.begin + done, size, bytes + done, through, 0, absl::OkStatus()});
  }
  return out;
}

// Joins a read tensor's pieces' CRCs and checks them, and that its bools are 0 or 1.
absl::Status check_tensor(absl::string_view file, const Pending& p,
                          const std::vector<Piece>& pieces) {
  uint32_t crc = 0;
  for (size_t i = p.first_piece; i < p.first_piece + p.pieces; ++i) {
    crc = crc32c_combine(crc, pieces[i].crc, pieces[i].size);
  }
  const std::string& name = p.layout->name;
  if (crc != p.expected_crc) {
    return loss(file, absl::StrCat("tensor '", name, "': checksum mismatch (manifest ",
                                   hex32(p.expected_crc), ", data ", hex32(crc), ")"));
  }
  if (p.layout->dtype == DType::kBool) {
    const char* bytes = static_cast<const char*>(p.tensor.impl()->data);
    for (const char* c = bytes; c != bytes + p.layout->bytes(); ++c) {
      if (*c != 0 && *c != 1) {
        return loss(file, absl::StrCat("tensor '", name, "': a bool that is not 0 or 1"));
      }
    }
  }
  return absl::OkStatus();
}

// Returns this process's CPU:0, where restored tensors are made before assignment.
absl::StatusOr<Device*> host_device() {
  absl::StatusOr<Runtime*> rt = Context::get().runtime();
  if (!rt.ok()) return rt.status();
  absl::StatusOr<int> index = (*rt)->find_device("/job:localhost/replica:0/task:0/device:CPU:0");
  if (!index.ok()) return index.status();
  return &(*rt)->device(*index);
}

}  // namespace

namespace {

absl::StatusOr<Manifest> read_manifest(FileSystem& fs, const std::string& prefix) {
  const std::string path = prefix + kManifestSuffix;
  absl::StatusOr<std::string> text = read_whole_file(fs, path);
  if (!text.ok() && absl::IsNotFound(text.status())) {
    return absl::NotFoundError(
        absl::StrCat("[checkpoint] no checkpoint at ", prefix, " (", path, " does not exist)"));
  }
  if (!text.ok()) return text.status();
  return parse_manifest(*text, path);
}

// Checks the data file's size and header against the manifest, and parses the header.
absl::StatusOr<SafetensorsLayout> read_layout(const ReadableFile& file, const std::string& path,
                                              const Manifest& manifest) {
  if (file.size() != manifest.data_bytes) {
    return loss(path, absl::StrCat(file.size(), " bytes, the manifest says ", manifest.data_bytes));
  }
  std::string head(std::min<uint64_t>(8, file.size()), '\0');
  if (absl::Status s = file.read_at(0, head.size(), head.data()); !s.ok()) return s;
  absl::StatusOr<uint64_t> data_start = safetensors_data_start(head, file.size(), path);
  if (!data_start.ok()) return data_start.status();
  head.resize(*data_start);
  if (absl::Status s = file.read_at(8, *data_start - 8, head.data() + 8); !s.ok()) return s;
  if (uint32_t crc = crc32c(head.data(), head.size()); crc != manifest.header_crc32c) {
    return loss(path, absl::StrCat("the header's checksum does not match (manifest ",
                                   hex32(manifest.header_crc32c), ", data ", hex32(crc), ")"));
  }
  return parse_safetensors(head, file.size(), path);
}

}  // namespace

void RestorePlacement::add(std::string name, const Variable& variable) {
  const std::shared_ptr<VariableState>& state = variable.handle_state();
  if (state == nullptr || !state->value.defined()) return;
  devices_[std::move(name)] = state->value.impl()->device;
}

Device* RestorePlacement::find(absl::string_view name) const {
  if (auto it = devices_.find(name); it != devices_.end()) return it->second;
  if (const size_t slash = name.rfind('/'); slash != absl::string_view::npos) {
    if (auto it = devices_.find(name.substr(0, slash)); it != devices_.end()) return it->second;
  }
  return nullptr;
}

absl::StatusOr<absl::flat_hash_map<std::string, Tensor>> read_checkpoint(
    FileSystem& fs, const std::string& prefix, const RestorePlacement* placement) {
  absl::StatusOr<Manifest> manifest = read_manifest(fs, prefix);
  if (!manifest.ok()) return manifest.status();
  const std::string path = dir_of(prefix) + "/" + manifest->data_file;
  absl::StatusOr<std::unique_ptr<ReadableFile>> data = fs.open_for_read(path);
  if (!data.ok()) {
    return loss(
        prefix + kManifestSuffix,
        absl::StrCat("its data file ", path, " cannot be opened: ", data.status().message()));
  }
  absl::StatusOr<SafetensorsLayout> layout = read_layout(**data, path, *manifest);
  if (!layout.ok()) return layout.status();
  absl::flat_hash_map<std::string, const SafetensorsTensor*> by_name;
  for (const SafetensorsTensor& t : layout->tensors) by_name[t.name] = &t;
  if (by_name.size() != manifest->tensors.size()) {
    return loss(path, absl::StrCat(by_name.size(), " tensors, the manifest names ",
                                   manifest->tensors.size()));
  }
  absl::StatusOr<Device*> host = host_device();
  if (!host.ok()) return host.status();
  std::vector<Pending> pending;
  std::vector<Piece> pieces;
  for (const Manifest::Entry& entry : manifest->tensors) {
    auto found = by_name.find(entry.name);
    if (found == by_name.end()) {
      return loss(path, absl::StrCat("tensor '", entry.name, "' of the manifest is missing"));
    }
    const size_t first = pieces.size();
    Device* device = placement != nullptr ? placement->find(entry.name) : nullptr;
    absl::StatusOr<Tensor> t =
        allocate_for(path, layout->data_start, *found->second, device, **host, pieces);
    if (!t.ok()) return t.status();
    pending.push_back({found->second, entry.crc32c, *std::move(t), first, pieces.size() - first});
  }
  read_pieces(**data, pieces, manifest->data_bytes);
  for (const Piece& p : pieces) {
    if (!p.status.ok()) return p.status;
  }
  absl::flat_hash_map<std::string, Tensor> out;
  for (Pending& p : pending) {
    if (absl::Status s = check_tensor(path, p, pieces); !s.ok()) return s;
    out[p.layout->name] = std::move(p.tensor);
  }
  return out;
}

}  // namespace mt::internal

// GTKWave's FST writer, included as Verilator's own FST tracing does
// (verilated_fst_c.cpp): its C sources compiled here as C++.
#define FST_CONFIG_INCLUDE "fst_config.h"
#include "gtkwave/fastlz.c"  // NOLINT(bugprone-suspicious-include): as said above
#include "gtkwave/fstapi.c"   // NOLINT(bugprone-suspicious-include)
#include "gtkwave/lz4.c"      // NOLINT(bugprone-suspicious-include)

#include "models/core/fst_writer.hpp"

#include <vector>

namespace fabricsim {

void* fst_open(const std::string& path) {
  void* ctx = fstWriterCreate(path.c_str(), 1);
  if (ctx) fstWriterSetTimescale(ctx, -12);
  return ctx;
}
void fst_scope(void* ctx, const std::string& name) {
  fstWriterSetScope(ctx, FST_ST_VCD_MODULE, name.c_str(), nullptr);
}
void fst_upscope(void* ctx) { fstWriterSetUpscope(ctx); }
std::uint32_t fst_var(void* ctx, const std::string& name, int width) {
  return fstWriterCreateVar(ctx, FST_VT_VCD_WIRE, FST_VD_IMPLICIT, static_cast<std::uint32_t>(width),
                            name.c_str(), 0);
}
void fst_time(void* ctx, std::uint64_t t) { fstWriterEmitTimeChange(ctx, t); }
void fst_value(void* ctx, std::uint32_t handle, const char* bits) {
  fstWriterEmitValueChange(ctx, handle, bits);
}
void fst_close(void* ctx) { fstWriterClose(ctx); }

namespace {

// Every variable's full name ("a.b.sig"), in file order, with its handle
// (aliases share a handle).
std::vector<std::pair<fstHandle, std::string>> fst_names(void* r) {
  std::vector<std::pair<fstHandle, std::string>> out;
  std::string scope;
  std::vector<std::size_t> marks;
  while (fstHier* h = fstReaderIterateHier(r)) {
    if (h->htyp == FST_HT_SCOPE) {
      marks.push_back(scope.size());
      scope += std::string(h->u.scope.name) + ".";
    } else if (h->htyp == FST_HT_UPSCOPE) {
      scope.resize(marks.back());
      marks.pop_back();
    } else if (h->htyp == FST_HT_VAR) {
      out.emplace_back(h->u.var.handle, scope + h->u.var.name);
    }
  }
  return out;
}

}  // namespace

std::map<std::string, std::size_t> fst_count_changes(const std::string& path) {
  std::map<std::string, std::size_t> out;
  void* r = fstReaderOpen(path.c_str());
  if (!r) return out;
  std::map<fstHandle, std::string> names;
  for (auto& [h, n] : fst_names(r)) names[h] = std::move(n);
  std::map<fstHandle, std::size_t> counts;
  fstReaderSetFacProcessMaskAll(r);
  fstReaderIterBlocks(
      r,
      [](void* user, uint64_t, fstHandle h, const unsigned char*) {
        ++(*static_cast<std::map<fstHandle, std::size_t>*>(user))[h];
      },
      &counts, nullptr);
  fstReaderClose(r);
  for (const auto& [h, n] : counts) out[names[h]] = n;
  return out;
}

std::vector<std::pair<std::uint64_t, std::string>> fst_changes(const std::string& path,
                                                               const std::string& name) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  void* r = fstReaderOpen(path.c_str());
  if (!r) return out;
  fstHandle want = 0;
  for (const auto& [h, n] : fst_names(r))
    if (n == name) want = h;
  if (want != 0) {
    fstReaderSetFacProcessMask(r, want);
    fstReaderIterBlocks(
        r,
        [](void* user, uint64_t t, fstHandle, const unsigned char* v) {
          static_cast<std::vector<std::pair<std::uint64_t, std::string>>*>(user)->emplace_back(
              t, reinterpret_cast<const char*>(v));
        },
        &out, nullptr);
  }
  fstReaderClose(r);
  return out;
}

}  // namespace fabricsim

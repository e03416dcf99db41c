// Reads the output of nccl-tests' *_perf binaries (all_reduce_perf,
// all_gather_perf, ...): the table of size, count, type, redop, [root],
// time, algbw, busbw, #wrong for out-of-place (then in-place) runs, and what
// the header says about the test. Plain C++: `fabricsim compare` runs the
// same sizes on a configuration and prints both.
//
// A log is a list of sections, each with its own rows and, when the log
// says, its GPU count, algorithm and protocol:
//  - one nccl-tests table: one section;
//  - '### KEY=VALUE ...' lines (keys GPUS, ALGO, PROTO, size) start a
//    section; its rows may come without nccl-tests' table header (then in
//    nccl-tests' own column order: 13 fields with root, 12 without). A
//    '###' line without KEY=VALUE is a heading and starts nothing; text
//    after the values (e.g. ': no output at any size') is the section's note;
//  - a size not above the previous row's, or a new table header after rows,
//    starts a section of its own (a second sweep in the same file).
// What the run was told or chose, read from the header:
//  - '# GPUS (n): 4' or '# GPUS (n): 2, 4, 6' (one count per section, in
//    order), nccl-tests' 'nGpus' x 'nThread' and its '#  Rank' lines;
//  - '# ALGO/ENV: NCCL_ALGO=Ring; NCCL_PROTO=LL' (text starting 'default' or
//    'sections' forces nothing: the sections say);
//  - '# NCCL tuner choice per size (...): 268435456:RING/SIMPLE, ...';
//  - the buffers' registration: nccl-tests' '-R N' (or -RN, --local_register N)
//    on a comment line that gives its command or flags ('# NOTE: command:
//    ./all_reduce_perf ... -R 2', 'nccl-tests flags -R 2'; there a bad value
//    is refused) or names a test ('./all_reduce_perf -g 4 -R 2'; there
//    anything but 0, 1 or 2 after -R is prose, not a flag);
//  - the test: nccl-tests' '# Collective test starting: all_reduce_perf',
//    else '# COLLECTIVE: all_reduce_perf'.
// A row's algorithm and protocol come from its section, else the forced
// setting, else the tuner's choice for its size; when two of these name
// different ones the log contradicts itself and is refused.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/core/config.hpp"

namespace fabricsim {

struct NcclRow {
  std::uint64_t size = 0;   // bytes, as nccl-tests reports it (per GPU)
  std::uint64_t count = 0;  // elements
  std::string type, redop;
  double time_us = 0, algbw = 0, busbw = 0;  // out-of-place
  // The in-place run of the same call, printed after it on the same row
  // (0: the log has no such column, or prints N/A): the machine's second
  // measurement of the same kernel, a view of its run-to-run spread.
  double in_place_time_us = 0;
  int line = 0;
  std::size_t section = 0;  // index in NcclLog::sections
  int ranks = 0;            // GPUs it ran on; 0: the log does not say
  // NCCL's names ("Ring", "NVLS", "Tree", ...; "Simple", "LL", "LL128"),
  // "" when the log does not say, and where each came from: "section",
  // "NCCL_ALGO" / "NCCL_PROTO" (forced), "tuner", or "".
  std::string algorithm, protocol;
  std::string algorithm_from, protocol_from;
};

struct NcclSection {
  std::string title;  // the '###' line's text; "" for an unmarked table
  int line = 0;       // of the '###' line, or of the section's first row
  int ranks = 0;      // 0: not known
  std::string algorithm, protocol;  // set by the section's own ALGO=, PROTO=
  std::string note;                 // text after its values
  std::size_t first = 0, count = 0;  // its rows in NcclLog::rows
};

// What NCCL's tuner chose for one size (the log's trailer line).
struct NcclChoice {
  std::string algorithm, protocol;
  int line = 0;
};

struct NcclLog {
  std::string origin;
  std::string test;  // "all_reduce_perf" if the log says, else ""
  int ranks = 0;     // the GPU count when every section has the same; else 0
  std::string forced_algorithm, forced_protocol;  // '# ALGO/ENV: NCCL_ALGO=...'
  int graph = -1;    // nccl-tests' banner 'graph: N' (1: calls from a CUDA graph, -G 1); -1: not said
  // nccl-tests' -R N from the command the header gives (0 none, 1 local, 2
  // symmetric windows); -1: not said
  int registration = -1;
  std::map<std::uint64_t, NcclChoice> tuner;      // size -> NCCL's choice
  std::vector<NcclSection> sections;
  std::vector<NcclRow> rows;  // every row, in file order
};

// Throws ConfigError naming the origin, the line and what was expected.
NcclLog parse_nccl_log(const std::string& text, const std::string& origin);

// NCCL's spelling of an algorithm or protocol name in any case ("RING",
// "nvls", "CollnetChain"); ConfigError naming the name, the place and the
// names NCCL has.
std::string nccl_algorithm_name(const std::string& name, const std::string& origin, int line);
std::string nccl_protocol_name(const std::string& name, const std::string& origin, int line);

// nccl-tests' names mapped to ours; each throws ConfigError naming the
// name and the ones fabricsim models.
CollectiveOp nccl_test_op(const std::string& test, const std::string& origin);
DType nccl_type(const std::string& type, const std::string& origin, int line);
// "none" (collectives that do not reduce) gives kSum, which they ignore.
RedOp nccl_redop(const std::string& redop, const std::string& origin, int line);

}  // namespace fabricsim

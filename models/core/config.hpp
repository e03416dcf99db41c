// The simulation's configuration: typed values with defaults. The defaults
// here are what 'fabricsim params' prints. The code, by concern:
//   config_enums.hpp     the choices as enums, with their names
//   config_schema.cpp    every key's type, unit, range and description
//   config_load.cpp      YAML files, 'base:' files, key=value overrides
//   config_validate.cpp  cross-parameter checks (uses topology and training)
//   config_docs.cpp      'fabricsim params' text and docs/config.md
//   config.cpp           quantities derived from a Config
// Dependencies point one way: topology and training use these types; only
// config_validate.cpp uses topology and training.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/core/allocator.hpp"
#include "models/core/config_enums.hpp"
#include "models/core/faults.hpp"
#include "models/core/address_map.hpp"
#include "models/core/link_errors.hpp"
#include "models/core/params.hpp"
#include "models/core/reduction_alu.hpp"
#include "models/core/time.hpp"

namespace fabricsim {

struct SimConfig {
  std::int64_t seed = 1;
  double warmup_ns = 2000;
  double duration_ns = 10000;
  double watchdog_ns = 10000;
  bool run_ahead = true;
};

struct LinkConfig {
  std::int64_t lanes = 2;
  double lane_gbps = 100;
  double encoding_efficiency = 1.0;
  double latency_ns = 100;
  std::int64_t flit_bytes = 16;
  // Reliability (docs/reliability.md).
  double ber = 0;
  double burst_bits = 1;
  Fec fec = Fec::kNone;
  double fec_decode_ns = 40;
  Retry retry = Retry::kNone;
  std::int64_t replay_buffer_flits = 4096;
  double ack_delay_ns = 5;
};

struct SwitchConfig {
  std::int64_t ports = 64;
  std::int64_t vcs = 1;
  std::int64_t input_buffer_flits = 512;
  std::int64_t output_buffer_flits = 64;
  Queueing queueing = Queueing::kVoq;
  AllocatorKind allocator = AllocatorKind::kISlip;
  std::int64_t iterations = 1;
  double speedup = 1.0;
  std::int64_t pipeline_cycles = 16;
  double clock_ghz = 1.5625;
  Multicast multicast = Multicast::kEngine;
  Egress egress = Egress::kHash;
};

struct TrafficConfig {
  Pattern pattern = Pattern::kUniform;
  double load = 0.5;
  std::int64_t packet_flits = 9;
  Process process = Process::kBernoulli;
  double burst_packets = 8;
  std::int64_t hotspot_endpoint = 0;
  double hotspot_fraction = 0.2;
  bool allow_self = true;
  double read_fraction = 0;
  std::int64_t outstanding_reads = 256;
};

struct EndpointConfig {
  std::int64_t rx_buffer_flits = 512;
  LinkPolicy link_policy = LinkPolicy::kStripe;
  std::int64_t stripe_bytes = 128;
};

// Which endpoints and switch chips exist and how they are wired (see
// models/core/topology.hpp for the derived ports and routes).
struct TopologyConfig {
  TopologyKind kind = TopologyKind::kSingle;
  std::int64_t endpoints = 8;
  std::int64_t switches = 4;
  // Links from an endpoint to each switch: `switches` values (every endpoint
  // alike) or endpoints x switches values (row-major, a row per endpoint).
  std::vector<std::int64_t> links = {1};
  // Switch-to-switch links as triples (switch a, switch b, count).
  std::vector<std::int64_t> switch_links = {};
};

// topology.kind=scaleout (docs/scale-out.md): `domains` copies of the
// scale-up topology above, whose GPUs also have NICs into a packet network
// of leaf switches (and spines): InfiniBand-like links with credits of
// flit_bytes per virtual lane, microsecond-class latencies.
struct ScaleOutConfig {
  std::int64_t domains = 2;
  Placement placement = Placement::kRail;
  std::int64_t nics_per_gpu = 1;
  std::int64_t tiers = 2;
  std::int64_t switch_ports = 64;
  double oversubscription = 1.0;
  double link_gbps = 400;
  double latency_ns = 500;
  std::int64_t flit_bytes = 64;
  double switch_latency_ns = 200;
  std::int64_t buffer_flits = 4096;
  bool sharp = false;  // in-network aggregation at the leaves (hierarchical all-reduce)
  // How a leaf's or spine's engine is built (reduction.organisation's values).
  EngineOrganisation sharp_organisation = EngineOrganisation::kCentral;
  // Reliability of the NIC, leaf and spine links (docs/reliability.md); the
  // burst length, FEC decode time and ack delay are link.*'s.
  double ber = 0;
  Fec fec = Fec::kNone;
  Retry retry = Retry::kNone;
  std::int64_t replay_buffer_flits = 4096;
};

// What the endpoints do: synthetic open-loop traffic, or collectives (every
// endpoint is a GPU taking part) swept over message sizes like nccl-tests.
struct WorkloadConfig {
  WorkloadKind kind = WorkloadKind::kSynthetic;
};

struct CollectiveConfig {
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgo algorithm = CollectiveAlgo::kRing;
  std::int64_t min_bytes = 1024;
  std::int64_t max_bytes = 1 << 20;
  std::int64_t step_factor = 2;
  DType dtype = DType::kFp32;
  RedOp redop = RedOp::kSum;
  std::int64_t iterations = 1;
  double gap_ns = 100;
  std::int64_t payload_bytes = 256;
  std::int64_t outstanding = 1024;
  std::int64_t root = 0;
  bool check = true;
  bool data = true;  // false: timing only, no payloads (collective.data)
  std::string workload;  // a training step's calls (JSON); empty: the size sweep
  std::string groups;    // NAME=LAYOUT,... replacing the workload's group layouts
  InterAlgo inter = InterAlgo::kRing;  // hierarchical: across the domains
  Protocol protocol = Protocol::kIdeal;   // the GPU side (collective.protocol)
  std::int64_t channels = 24;             // NCCL channels (collective.channels)
  Registration registration = Registration::kNone;  // the buffers' NCCL registration
  // Steady-state fast-forward of long calls (models/core/fast_forward.hpp).
  FastForwardMode fast_forward = FastForwardMode::kAuto;
  std::int64_t fast_forward_min_bytes = std::int64_t{256} << 20;  // auto: calls from this size
  std::int64_t fast_forward_probe_bytes = std::int64_t{16} << 20;  // the first probe
  double fast_forward_tolerance = 0.01;  // largest estimated error accepted
};

// The GPU side of NCCL's collectives (collective.protocol other than ideal;
// docs/models/gpu.md): its staging buffers, threads, write responses and
// kernel launch.
struct GpuConfig {
  std::int64_t buffer_bytes = 4 << 20;  // NCCL_BUFFSIZE: a connection's staging buffer
  std::int64_t slots = 8;               // NCCL_STEPS: steps of that buffer
  std::int64_t threads = 512;           // threads per channel (ring, Simple and LL)
  std::int64_t ll_buffer_bytes = 512 << 10;   // NCCL_LL_BUFFSIZE
  std::int64_t ll128_buffer_bytes = 4915200;  // NCCL_LL128_BUFFSIZE
  std::int64_t ll128_threads = 640;           // threads per channel with LL128
  bool write_acks = true;               // every data write is answered by a response
  double launch_ns = 0;                 // from the call's start to the kernels' start
  double host_call_ns = 0;              // the shortest a call can be: the host's time to issue it
  bool cuda_graph = false;              // calls launched from a CUDA graph (nccl-tests -G 1)
  double graph_launch_ns = 0;           // launch_ns's counterpart for graph launches
  double slice_sync_ns = 0;             // ring, Simple: a slice's barriers and first load
  double channel_gbps = 0;              // ring: one channel's (CTA's) copy rate; 0 unlimited
  double ll_trip_ns = 0;                // ring, LL: a thread's trip per 16 B line; 0 unbounded
  double simple_start_ns = 0;           // Simple kernels (ring, NVLS): start beyond an LL kernel's
  double ll128_start_ns = 0;            // LL128 ring kernel: start beyond an LL kernel's
  double symmetric_start_ns = 0;        // symmetric kernel: start beyond an LL kernel's
  std::int64_t symmetric_ctas = 0;      // NCCL_SYM_CTAS: the symmetric kernels' CTAs (0: NCCL's model)
  double tuner_nvlink_gbps = 370.8;     // a GPU's NVLink bandwidth as NCCL's tuner sees it
  double tuner_graph_gbps = 360;        // the ring graph's bandwidth in NCCL's tuner
  // NVLS all-reduce as NCCL runs it (collective.algorithm=nvls, protocol simple).
  std::int64_t nvls_channels = 16;           // NVLS_NCHANNELS_SM90: CTAs
  std::int64_t nvls_chunk_bytes = 128 << 10;  // NCCL_NVLS_CHUNKSIZE: a step's chunk
  std::int64_t nvls_unroll = 8;               // ncclCollUnroll on sm90: 16 B loads per thread
  std::int64_t nvls_reduce_warps = 0;         // 0: NCCL's rule (7 up to 6 GPUs, else 5)
  double nvls_warp_copy_gbps = 0;             // scatter/gather: one warp's local copy rate; 0 instant
};

// The in-switch reduction engine of every switch chip (NVLink SHARP-like).
struct ReductionConfig {
  std::int64_t table_entries = 1024;
  std::int64_t replication_slots = 256;
  std::int64_t ports = 4;
  std::int64_t alu_bytes_per_cycle = 256;
  std::int64_t port_bytes_per_cycle = 1024;
  std::int64_t pipeline_cycles = 8;
  FoldOrder order = FoldOrder::kMember;
  AluKind alu = AluKind::kModel;
  EngineOrganisation organisation = EngineOrganisation::kCentral;
  std::int64_t chip_ports = 64;   // distributed: ports the chip's totals are divided over
  std::int64_t slice_ports = 1;   // distributed: link ports per slice
};

// Stragglers: one GPU late, slow or badly connected; jitter on every GPU.
struct StragglerConfig {
  std::int64_t gpu = -1;
  double delay_ns = 0;
  double jitter_ns = 0;
  double issue_factor = 1.0;
  std::int64_t lanes = 0;
};

struct FaultConfig {
  std::vector<Fault> list;
};

// workload.kind=tlm: every endpoint is a TLM-2.0 target driven by the
// user's initiators (tlm/, docs/tlm.md). The address map: GPU g's memory is
// [g * window_bytes, (g + 1) * window_bytes); multicast object k covers
// [multicast_base + offset_k, + bytes_k) and is backed in each member's
// memory at local offset offset_k.
struct TlmConfig {
  std::int64_t window_bytes = std::int64_t{1} << 30;
  std::int64_t multicast_base = std::int64_t{1} << 44;
  std::vector<McObject> multicast;
  std::int64_t queue_packets = 64;
  std::int64_t outstanding = 256;
  std::int64_t max_bytes = 4096;
  double memory_read_ns = 0;
  double memory_write_ns = 0;
};

struct Config {
  SimConfig sim;
  FaultConfig faults;
  StragglerConfig straggler;
  ReductionConfig reduction;
  WorkloadConfig workload;
  CollectiveConfig collective;
  GpuConfig gpu;
  TopologyConfig topology;
  LinkConfig link;
  SwitchConfig sw;
  TrafficConfig traffic;
  EndpointConfig endpoint;
  TlmConfig tlm;
  ScaleOutConfig scaleout;
};

Schema<Config> config_schema();
// The keys of the GPU side (config_schema_gpu.cpp), a section of the schema.
void add_gpu_keys(Schema<Config>& s);
// collective.fast_forward* (config_schema_fast_forward.cpp).
void add_fast_forward_keys(Schema<Config>& s);

// Cross-parameter checks a single range cannot express. Throws ConfigError
// naming every key involved.
void validate(const Config& c);

// Defaults, then the YAML file (if `path` is not empty), then each
// "key=value" override in order, then validate().
Config load_config(const std::string& path, const std::vector<std::string>& overrides);

// Every key with its current value, in schema order (for stats.json and logs).
std::vector<std::pair<std::string, std::string>> config_values(const Config& c);

// 'fabricsim params': a plain-text table, or the Markdown page docs/config.md.
std::string params_text();
std::string params_markdown();

// Derived timing, in integer picoseconds (see docs/models/link.md).
double link_gbps(const LinkConfig& l);  // payload-carrying rate per direction
Ps flit_time_ps(const LinkConfig& l);   // serialization time of one flit
Ps switch_cycle_ps(const SwitchConfig& s);

std::string to_string(AllocatorKind a);

// Number of endpoints the topology has (switch.ports for a single switch;
// scaleout.domains x topology.endpoints for a scale-out fabric).
int endpoint_count(const Config& c);
// The link and switch parameters of the scale-out tier (NIC links, leaf and
// spine switches), as a Config whose link.* and switch.* describe them: one
// allocation per flit time, the pipeline from scaleout.switch_latency_ns.
Config scaleout_tier_config(const Config& c);
// True if endpoints carry data in payload slots (collective, tlm): packets
// then hold up to collective.payload_bytes.
bool carries_data(const Config& c);
// True if the workload uses the switches' reduction engines.
bool uses_reduction_engine(const Config& c);
// collective.algorithm=auto may pick NVLS: NCCL would run it with the
// protocol allowed (simple or auto) for the data type and reduction
// (multimem.ld_reduce: sum only for floating point; docs/models/gpu.md).
bool auto_may_pick_nvls(const Config& c);
// collective.registration=symmetric may run NCCL's symmetric all-reduce
// kernel (multimem.ld_reduce and st through the switches' engines), whatever
// collective.algorithm says: the GPU side, an all_reduce sweep of a
// floating-point sum.
bool may_run_symmetric_kernel(const Config& c);
// Flits of the longest packet the workload sends (buffers must hold one).
int max_packet_flits(const Config& c);
// Latency FEC adds to every flit crossing a link: one codeword at the lane
// rate (accumulation) plus decoding; 0 without FEC.
Ps fec_latency_ps(const LinkConfig& l);
// Flits a go-back-N sender must be able to hold unacknowledged to stream
// packets of `flits` flits without stalling: the ack round trip at the flit rate.
std::int64_t replay_round_trip_flits(const LinkConfig& l, int flits);
bool link_reliability_on(const LinkConfig& l);
// Also when a fault changes a link's BER.
bool link_reliability_on(const Config& c);
std::string to_string(Fec f);
// Flits of a packet carrying `payload` bytes: one header flit + payload flits.
int packet_flits_for(const Config& c, std::int64_t payload_bytes);
// Address interleave across parallel links: endpoint.stripe_bytes, but never
// finer than one packet's payload (a packet travels whole on one link, so a
// finer stripe would leave links idle: 256-B packets on a 128-B stripe use
// only every other link).
std::uint64_t stripe_bytes(const Config& c);

}  // namespace fabricsim

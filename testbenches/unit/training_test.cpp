// Training workloads: group layouts tile the GPUs (or say which GPU does
// not fit), and the JSON reader names the file, the call and the field of
// every mistake.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "models/core/errors.hpp"
#include "models/core/training.hpp"

namespace fabricsim {
namespace {

TEST(Training, LayoutsTileTheGpus) {
  const Partition tp = make_partition("tp", "8x1", 32, "test");
  ASSERT_EQ(tp.groups.size(), 4u);
  EXPECT_EQ(tp.groups[1], (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  const Partition dp = make_partition("dp", "4x8", 32, "test");
  ASSERT_EQ(dp.groups.size(), 8u);
  EXPECT_EQ(dp.groups[3], (std::vector<int>{3, 11, 19, 27}));
  EXPECT_EQ(dp.group_of[19], 3);
  EXPECT_EQ(dp.rank_of[19], 2);
  // Two dimensions: 4 consecutive GPUs in each of two domains of 8.
  const Partition x = make_partition("tp", "4x1+2x8", 32, "test");
  EXPECT_EQ(x.groups[0], (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(x.groups[1], (std::vector<int>{4, 5, 6, 7, 12, 13, 14, 15}));
  EXPECT_EQ(x.groups[2], (std::vector<int>{16, 17, 18, 19, 24, 25, 26, 27}));
  EXPECT_EQ(whole_fabric(5).groups, (std::vector<std::vector<int>>{{0, 1, 2, 3, 4}}));
}

TEST(Training, LayoutErrorsNameTheGpu) {
  auto message = [](const std::string& layout, int gpus) {
    try {
      make_partition("tp", layout, gpus, "where");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("3x1", 8).find("would take GPU 8, which does not exist"), std::string::npos)
      << message("3x1", 8);
  EXPECT_NE(message("2x1+2x1", 8).find("already in another group"), std::string::npos);
  EXPECT_NE(message("8", 8).find("is not SIZExSTRIDE"), std::string::npos);
  EXPECT_NE(message("0x1", 8).find("at least 1"), std::string::npos);
  EXPECT_NE(message("16x1", 8).find("more than the fabric's 8 GPUs"), std::string::npos);
  EXPECT_NE(message("2x2000000000", 8).find("spans 2000000001 GPUs"), std::string::npos)
      << message("2x2000000000", 8);
  EXPECT_NE(message("100000000x1", 8).find("100000000 members"), std::string::npos);
  EXPECT_NE(message("4x99999999999", 8).find("is not SIZExSTRIDE"), std::string::npos);
}

std::string write_file(const std::string& text) {
  std::string path = ::testing::TempDir() + "/workload_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
  std::ofstream(path) << text;
  return path;
}

std::string load_error_at(const std::string& path, const std::string& overrides = "") {
  try {
    load_training(path, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::string load_error(const std::string& text, const std::string& overrides = "") {
  return load_error_at(write_file(text), overrides);
}

TEST(Training, ReadsCallsAndOverrides) {
  const std::string path = write_file(R"({"name": "w", "groups": {"tp": "8x1", "dp": "4x8"},
    "calls": [{"name": "a", "op": "all_reduce", "algorithm": "ring", "bytes": 1024,
               "group": "tp", "compute_ns": 5.5},
              {"op": "all_to_all", "algorithm": "direct", "bytes": 64, "group": "dp"}]})");
  const TrainingWorkload w = load_training(path, "tp=4x1+2x8, dp=2x4+2x16");
  ASSERT_EQ(w.calls.size(), 2u);
  EXPECT_EQ(w.calls[0].op, CollectiveOp::kAllReduce);
  EXPECT_DOUBLE_EQ(w.calls[0].compute_ns, 5.5);
  EXPECT_EQ(w.calls[1].name, "call1");
  // Groups come in name order (dp, tp).
  ASSERT_EQ(w.groups.size(), 2u);
  EXPECT_EQ(w.groups[1], (std::pair<std::string, std::string>{"tp", "4x1+2x8"}));
  const auto ps = training_partitions(w, 32);
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps[0].name, "all");
  // The remapped dp groups take one GPU of each tp group.
  EXPECT_EQ(ps[1].groups[0], (std::vector<int>{0, 4, 16, 20}));
  EXPECT_EQ(ps[2].groups[0], (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11}));
}

TEST(Training, ErrorsNameTheFileCallAndField) {
  const std::string ok_call = R"({"op": "all_reduce", "bytes": 8, "group": "tp"})";
  auto with_call = [](const std::string& call) {
    return std::string(R"({"groups": {"tp": "2x1"}, "calls": [)") + call + "]}";
  };
  EXPECT_NE(load_error("{").find("is not valid JSON"), std::string::npos);
  EXPECT_NE(load_error(R"({"calls": [], "extra": 1})").find("unknown field 'extra'"), std::string::npos);
  EXPECT_NE(load_error(R"({"calls": []})").find("no calls"), std::string::npos);
  EXPECT_NE(load_error(with_call(R"({"op": "all_reduce", "bytes": 8, "group": "tp", "byts": 1})"))
                .find("calls[0].byts"),
            std::string::npos);
  EXPECT_NE(load_error(with_call(R"({"op": "reduce", "bytes": 8, "group": "tp"})"))
                .find("calls[0].op 'reduce' is not allowed; allowed: all_reduce, reduce_scatter"),
            std::string::npos);
  EXPECT_NE(load_error(with_call(R"({"op": "all_reduce", "bytes": 0, "group": "tp"})"))
                .find("calls[0].bytes = 0"),
            std::string::npos);
  EXPECT_NE(load_error(with_call(R"({"op": "all_reduce", "group": "tp"})")).find("are required"),
            std::string::npos);
  EXPECT_NE(load_error(with_call(R"({"op": "all_reduce", "bytes": 8, "group": "ep"})"))
                .find("group 'ep' is not defined"),
            std::string::npos);
  EXPECT_NE(load_error(with_call(R"({"op": "all_to_all", "bytes": 8, "group": "tp"})"))
                .find("is not modelled in a workload"),
            std::string::npos);
  EXPECT_NE(load_error(with_call(
                           R"({"op": "all_reduce", "algorithm": "hierarchical", "bytes": 8, "group": "tp"})"))
                .find("use group 'all'"),
            std::string::npos);
  EXPECT_NE(load_error(with_call(ok_call), "pp=2x1").find("(its groups: tp)"), std::string::npos);
  EXPECT_NE(load_error(with_call(ok_call), "tp=2").find("is not SIZExSTRIDE"), std::string::npos);
  EXPECT_NE(load_error("", "").find("is not valid JSON"), std::string::npos);
  EXPECT_NE(load_error_at(::testing::TempDir()).find("is a directory"), std::string::npos);
  try {
    load_training("/nonexistent/w.json", "");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open '/nonexistent/w.json'"), std::string::npos);
  }
}

}  // namespace
}  // namespace fabricsim

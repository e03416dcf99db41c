// The in-switch reduction ALU: y = a op b, element-wise over LANES 32-bit
// lanes, as models/core/reduction_alu.cpp defines it bit for bit (that C++
// model is the golden reference; docs/models/reduction_alu.md has the rules).
//
// dtype: 0 fp32, 1 fp16, 2 bf16, 3 int32 (16-bit types packed two per lane,
//        element 2k in bits [15:0] of lane k, as little-endian bytes lie);
// op:    0 sum, 1 min, 2 max (3 is treated as sum).
// fp sums round to nearest even with subnormals; any NaN, or Inf + -Inf,
// gives the canonical quiet NaN; min/max order -0 below +0, return an input
// unchanged (a on ties) and give the canonical NaN if either input is NaN;
// int32 sums wrap.
//
// Interface: valid/ready on both sides; a beat is taken when valid && ready.
// `tag` (the reduction-table entry) travels with the data. The result comes
// out STAGES cycles after it was taken when nothing stalls (STAGES >= 1: an
// operand register, the combinational datapath, STAGES-1 result registers);
// a stalled output holds its data and the stall propagates backwards stage
// by stage.
module reduction_alu #(
    parameter int LANES = 16,
    parameter int STAGES = 2,
    parameter int TAG_W = 16,
    // bit d set: dtype d is built (0 fp32, 1 fp16, 2 bf16, 3 int32). A beat of
    // a dtype left out gives zeros. A simulator or a one-type engine can
    // leave out what it never uses.
    parameter logic [3:0] DTYPES = 4'b1111
) (
    input  logic                  clk,
    input  logic                  rst_n,
    input  logic                  in_valid,
    output logic                  in_ready,
    input  logic [           1:0] in_dtype,
    input  logic [           1:0] in_op,
    input  logic [     TAG_W-1:0] in_tag,
    input  logic [32*LANES-1:0]   in_a,
    input  logic [32*LANES-1:0]   in_b,
    output logic                  out_valid,
    input  logic                  out_ready,
    output logic [     TAG_W-1:0] out_tag,
    output logic [32*LANES-1:0]   out_y
);
  // ---------------------------------------------------------- input stage
  // Stage 0 registers the operands; the datapath works from these registers,
  // so no combinational path runs from the inputs to the outputs (and a
  // cycle-based simulator computes the datapath once per clock, not on
  // every input change).
  logic [STAGES-1:0] v;
  logic [STAGES:0] rdy  /* verilator split_var */;  // per-stage: not one circular signal
  logic [1:0] dtype_q, op_q;
  logic [TAG_W-1:0] tag_q;
  logic [32*LANES-1:0] a_q, b_q;
  always_ff @(posedge clk) begin
    if (rdy[0]) begin
      dtype_q <= in_dtype;
      op_q <= in_op;
      tag_q <= in_tag;
      a_q <= in_a;
      b_q <= in_b;
    end
  end

  // ---------------------------------------------------------- datapath
  logic [32*LANES-1:0] y_comb;
  for (genvar l = 0; l < LANES; l++) begin : g_lane
    logic [31:0] a, b;
    assign a = a_q[32*l+:32];
    assign b = b_q[32*l+:32];
    logic [31:0] f32_sum, i32_sum, f32_min, f32_max, i32_min, i32_max;
    logic [15:0] h_sum[2], bh_sum[2], h_min[2], h_max[2], bh_min[2], bh_max[2];

    if (DTYPES[0]) begin : g_f32
      fp_add #(.E(8), .M(23)) u_f32 (.a(a), .b(b), .y(f32_sum));
      fp_minmax #(.W(32)) u_f32_mm (
          .a(a), .b(b), .e_all_ones(32'h7F80_0000), .mn(f32_min), .mx(f32_max));
    end else begin : g_no_f32
      assign {f32_sum, f32_min, f32_max} = '0;
    end
    if (DTYPES[3]) begin : g_i32
      assign i32_sum = a + b;
      assign i32_min = ($signed(b) < $signed(a)) ? b : a;
      assign i32_max = ($signed(b) > $signed(a)) ? b : a;
    end else begin : g_no_i32
      assign {i32_sum, i32_min, i32_max} = '0;
    end
    for (genvar h = 0; h < 2; h++) begin : g_half
      if (DTYPES[1]) begin : g_f16
        fp_add #(.E(5), .M(10)) u_f16 (.a(a[16*h+:16]), .b(b[16*h+:16]), .y(h_sum[h]));
        fp_minmax #(.W(16)) u_f16_mm (
            .a(a[16*h+:16]), .b(b[16*h+:16]), .e_all_ones(16'h7C00), .mn(h_min[h]), .mx(h_max[h]));
      end else begin : g_no_f16
        assign {h_sum[h], h_min[h], h_max[h]} = '0;
      end
      if (DTYPES[2]) begin : g_bf16
        fp_add #(.E(8), .M(7)) u_bf16 (.a(a[16*h+:16]), .b(b[16*h+:16]), .y(bh_sum[h]));
        fp_minmax #(.W(16)) u_bf16_mm (
            .a(a[16*h+:16]), .b(b[16*h+:16]), .e_all_ones(16'h7F80), .mn(bh_min[h]), .mx(bh_max[h]));
      end else begin : g_no_bf16
        assign {bh_sum[h], bh_min[h], bh_max[h]} = '0;
      end
    end

    always_comb begin
      unique case ({dtype_q, op_q})
        4'b00_01: y_comb[32*l+:32] = f32_min;
        4'b00_10: y_comb[32*l+:32] = f32_max;
        4'b01_01: y_comb[32*l+:32] = {h_min[1], h_min[0]};
        4'b01_10: y_comb[32*l+:32] = {h_max[1], h_max[0]};
        4'b10_01: y_comb[32*l+:32] = {bh_min[1], bh_min[0]};
        4'b10_10: y_comb[32*l+:32] = {bh_max[1], bh_max[0]};
        4'b11_01: y_comb[32*l+:32] = i32_min;
        4'b11_10: y_comb[32*l+:32] = i32_max;
        4'b01_00, 4'b01_11: y_comb[32*l+:32] = {h_sum[1], h_sum[0]};
        4'b10_00, 4'b10_11: y_comb[32*l+:32] = {bh_sum[1], bh_sum[0]};
        4'b11_00, 4'b11_11: y_comb[32*l+:32] = i32_sum;
        default: y_comb[32*l+:32] = f32_sum;
      endcase
    end
  end

  // ---------------------------------------------------------- pipeline
  // Stage 0 holds operands, stages 1 .. STAGES-1 results; stage s holds a
  // beat when v[s] and may load when empty or when its beat moves on this
  // cycle (rdy[s]). Latency: STAGES cycles.
  logic [32*LANES-1:0] d[STAGES];
  logic [TAG_W-1:0] t[STAGES];
  assign rdy[STAGES] = out_ready;
  for (genvar s = 0; s < STAGES; s++) begin : g_stage
    assign rdy[s] = !v[s] || rdy[s+1];
    always_ff @(posedge clk or negedge rst_n) begin
      if (!rst_n) begin
        v[s] <= 1'b0;
      end else if (rdy[s]) begin
        v[s] <= (s == 0) ? in_valid : v[s-1];
      end
    end
    if (s > 0) begin : g_result
      always_ff @(posedge clk) begin
        if (rdy[s]) begin
          d[s] <= (s == 1) ? y_comb : d[s-1];
          t[s] <= (s == 1) ? tag_q : t[s-1];
        end
      end
    end
  end
  assign d[0] = y_comb;  // stage 0's result, valid with v[0]
  assign t[0] = tag_q;
  assign in_ready = rdy[0];
  assign out_valid = v[STAGES-1];
  assign out_y = d[STAGES-1];
  assign out_tag = t[STAGES-1];
endmodule

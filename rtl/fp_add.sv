// Correctly rounded IEEE 754 addition for a binary format with E exponent
// bits and M stored fraction bits (fp32: 8/23, fp16: 5/10, bf16: 8/7).
// Combinational. Round to nearest, ties to even; subnormal inputs and
// outputs; overflow to +-Inf; Inf + -Inf and any NaN input give the
// canonical quiet NaN (exponent all ones, only the top fraction bit set);
// an exact zero sum is +0 unless both inputs are -0.
//
// Datapath: order the operands by magnitude, align the smaller one with a
// guard, a round and a sticky bit, add or subtract, normalize (never below
// the smallest normal exponent: that is how subnormals come out), round,
// pack. Three extra bits make the rounding correct for both effective
// addition and subtraction (the only case needing a long left shift, a
// small exponent difference, is exact).
module fp_add #(
    parameter int E = 8,
    parameter int M = 23
) (
    input  logic [E+M:0] a,
    input  logic [E+M:0] b,
    output logic [E+M:0] y
);
  localparam int W = M + 1;          // significand with the hidden bit
  localparam int X = W + 3;          // plus guard, round, sticky
  localparam int SW = $clog2(X + 2); // width of shift amounts
  localparam logic [E-1:0] EMAX = {E{1'b1}};
  localparam logic [E+M:0] QNAN = {1'b0, EMAX, 1'b1, {(M - 1) {1'b0}}};

  // Unpack.
  logic sa, sb;
  logic [E-1:0] ea, eb;
  logic [M-1:0] fa, fb;
  assign {sa, ea, fa} = a;
  assign {sb, eb, fb} = b;
  logic a_nan, b_nan, a_inf, b_inf;
  assign a_nan = (ea == EMAX) && (fa != '0);
  assign b_nan = (eb == EMAX) && (fb != '0);
  assign a_inf = (ea == EMAX) && (fa == '0);
  assign b_inf = (eb == EMAX) && (fb == '0);

  // Effective exponents (a subnormal has exponent 1, hidden bit 0).
  logic [E-1:0] xa, xb;
  logic [W-1:0] ma, mb;
  assign xa = (ea == '0) ? E'(1) : ea;
  assign xb = (eb == '0) ? E'(1) : eb;
  assign ma = {ea != '0, fa};
  assign mb = {eb != '0, fb};

  // Order by magnitude: big is |a| >= |b|.
  logic swap;
  assign swap = {xb, mb} > {xa, ma};
  logic s_big, s_small;
  logic [E-1:0] x_big, x_small;
  logic [W-1:0] m_big, m_small;
  assign s_big = swap ? sb : sa;
  assign s_small = swap ? sa : sb;
  assign x_big = swap ? xb : xa;
  assign x_small = swap ? xa : xb;
  assign m_big = swap ? mb : ma;
  assign m_small = swap ? ma : mb;

  // Align the smaller significand: shifted-out bits fold into the sticky bit.
  logic [E-1:0] d;
  assign d = x_big - x_small;
  logic [X-1:0] big_x, small_x, small_aligned, shifted, lost_mask;
  assign big_x = {m_big, 3'b000};
  assign small_x = {m_small, 3'b000};
  assign shifted = small_x >> d;
  assign lost_mask = ~({X{1'b1}} << d);
  assign small_aligned = (d >= E'(X)) ? {{(X - 1) {1'b0}}, small_x != '0}
                                      : shifted | {{(X - 1) {1'b0}}, (small_x & lost_mask) != '0};

  // Add or subtract (|big| >= |small|, so a difference is never negative).
  logic sub;
  assign sub = s_big ^ s_small;
  logic [X:0] sum;
  assign sum = sub ? ({1'b0, big_x} - {1'b0, small_aligned}) : ({1'b0, big_x} + {1'b0, small_aligned});

  // Normalize. A carry out shifts right once (keeping the sticky); leading
  // zeros shift left, but no further than exponent 1 (a subnormal result).
  logic [SW-1:0] lz;
  always_comb begin
    lz = SW'(X);
    for (int i = 0; i < X; i++) begin
      if (sum[i]) lz = SW'(X - 1 - i);
    end
  end
  logic [E+1:0] exp_n;  // two extra bits: room for +1 and no wrap below 0
  logic [X-1:0] norm;
  logic [E+1:0] room;   // how far left we may shift: down to exponent 1
  logic [SW-1:0] sh;
  assign room = {2'b00, x_big} - (E + 2)'(1);
  assign sh = ((E + 2)'(lz) <= room) ? lz : SW'(room);
  always_comb begin
    if (sum[X]) begin
      norm = sum[X:1] | {{(X - 1) {1'b0}}, sum[0]};
      exp_n = {2'b00, x_big} + (E + 2)'(1);
    end else begin
      norm = sum[X-1:0] << sh;
      exp_n = {2'b00, x_big} - (E + 2)'(sh);
    end
  end

  // Round to nearest, ties to even, on the guard / round / sticky bits.
  logic lsb, guard, rest, round_up;
  assign lsb = norm[3];
  assign guard = norm[2];
  assign rest = norm[1] | norm[0];
  assign round_up = guard & (rest | lsb);
  logic [W:0] rounded;  // one bit for the carry out of rounding
  assign rounded = {1'b0, norm[X-1:3]} + (W + 1)'(round_up);
  logic [E+1:0] exp_r;
  logic [W-1:0] mant_r;
  always_comb begin
    if (rounded[W]) begin  // 1.11..1 rounded up to 10.0..0
      exp_r = exp_n + (E + 2)'(1);
      mant_r = rounded[W:1];
    end else begin
      exp_r = exp_n;
      mant_r = rounded[W-1:0];
    end
  end

  // Pack. A result without its hidden bit is subnormal (or zero): exponent 0.
  always_comb begin
    if (a_nan || b_nan || (a_inf && b_inf && (sa != sb))) begin
      y = QNAN;
    end else if (a_inf || b_inf) begin
      y = a_inf ? {sa, EMAX, {M{1'b0}}} : {sb, EMAX, {M{1'b0}}};
    end else if (sum == '0) begin
      y = {sa & sb, {(E + M) {1'b0}}};
    end else if (exp_r >= {2'b00, EMAX}) begin
      y = {s_big, EMAX, {M{1'b0}}};
    end else if (!mant_r[W-1]) begin
      y = {s_big, {E{1'b0}}, mant_r[M-1:0]};
    end else begin
      y = {s_big, exp_r[E-1:0], mant_r[M-1:0]};
    end
  end
endmodule

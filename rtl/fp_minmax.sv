// min and max of two IEEE 754 values of W bits (fp32, fp16 or bf16), as the
// golden model defines them: any NaN input gives the canonical quiet NaN;
// otherwise the total order of the bit patterns with -0 below +0, returning
// an input unchanged (a when they are equal). `e_all_ones` is the format's
// exponent field all ones, in place (0x7F800000, 0x7C00, 0x7F80): the
// canonical NaN is that with the top fraction bit set.
module fp_minmax #(
    parameter int W = 32
) (
    input  logic [W-1:0] a,
    input  logic [W-1:0] b,
    input  logic [W-1:0] e_all_ones,
    output logic [W-1:0] mn,
    output logic [W-1:0] mx
);
  logic [W-1:0] mag_a, mag_b, qnan, key_a, key_b;
  logic nan;
  assign mag_a = {1'b0, a[W-2:0]};
  assign mag_b = {1'b0, b[W-2:0]};
  assign nan = (mag_a > e_all_ones) || (mag_b > e_all_ones);
  // The top fraction bit is the highest bit below the exponent field.
  assign qnan = e_all_ones | ((e_all_ones & ~(e_all_ones << 1)) >> 1);
  // Order keys: flip the magnitude of negatives, set the sign of positives.
  assign key_a = a[W-1] ? {1'b0, ~a[W-2:0]} : {1'b1, a[W-2:0]};
  assign key_b = b[W-1] ? {1'b0, ~b[W-2:0]} : {1'b1, b[W-2:0]};
  assign mn = nan ? qnan : (key_b < key_a) ? b : a;
  assign mx = nan ? qnan : (key_b > key_a) ? b : a;
endmodule

// benchdnn descriptors: parsing with benchdnn's defaults, printing, round trips, and errors that
// name the offending token.
#include <doctest/doctest.h>

#include "kernels/common/error.hpp"
#include "kernels/common/problem.hpp"

using namespace convlab;

TEST_CASE("problem: the issue's example descriptor") {
  const ConvProblem p = parse_problem("mb32ic64ih56oc64oh56kh3ph1");
  CHECK(p.n == 32);
  CHECK(p.c == 64);
  CHECK(p.h == 56);
  CHECK(p.w == 56);  // square default
  CHECK(p.k == 64);
  CHECK(p.r == 3);
  CHECK(p.s == 3);
  CHECK(p.stride_h == 1);
  CHECK(p.pad_w == 1);
  CHECK(p.dilation_h == 1);  // dense: benchdnn's dh0
  CHECK(p.groups == 1);
  CHECK(p.out_h() == 56);
  CHECK(p.flops() == doctest::Approx(2.0 * 32 * 64 * 56 * 56 * 64 * 9));
  CHECK(to_string(p) == "mb32ic64ih56oc64oh56kh3ph1");
}

TEST_CASE("problem: benchdnn defaults for omitted fields") {
  const ConvProblem p = parse_problem("ic3oc16ih7kh3");
  CHECK(p.n == 2);  // benchdnn's default minibatch
  CHECK(p.pad_h == 0);
  CHECK(p.out_h() == 5);
  SUBCASE("padding is deduced from a given output size") {
    const ConvProblem q = parse_problem("ic3ih7oc16oh7kh3");
    CHECK(q.pad_h == 1);
    CHECK(q.pad_w == 1);
  }
  SUBCASE("a given width is kept apart from the height") {
    const ConvProblem q = parse_problem("ic3ih8iw12oc4kh3kw1");
    CHECK(q.w == 12);
    CHECK(q.s == 1);
    CHECK(q.out_w() == 12);
    CHECK(q.out_h() == 6);
  }
  SUBCASE("underscores separate nothing") {
    CHECK(parse_problem("g2mb1_ic8ih5_oc8oh5_kh3_ph1") == parse_problem("g2mb1ic8ih5oc8oh5kh3ph1"));
  }
}

TEST_CASE("problem: dilation, stride, groups and names round-trip through the printed form") {
  const char* cases[] = {
      "mb1ic3ih32oc16oh32kh3ph1",
      "mb4ic16ih32oc32oh16kh3sh2ph1",
      "mb2ic8ih9oc8oh5kh3dh1",                     // benchdnn's dh1 = PyTorch dilation 2
      "g32mb1ic32ih16oc32oh16kh3ph1",              // depthwise
      "g4mb3ic8ih7iw9oc12oh4ow5kh3kw2sh2sw2ph1pw1",
      "mb1ic3ih10oc2oh5kh1sh2sw1ow10",
      "mb1ic3ih10oc2oh10kh3ph1pw0ow8n\"lab-cnn:conv1\"",
      "mb1ic3ih224oc32oh112kh3sh2ph0",             // padded 0 above, 1 below (TensorFlow's SAME)
      "mb1ic3ih7iw8oc2oh6ow9kh3kw2ph1pw0",          // padded less below, more to the right
  };
  for (const char* text : cases) {
    CAPTURE(text);
    const ConvProblem p = parse_problem(text);
    CHECK(parse_problem(to_string(p)) == p);
  }
  const ConvProblem named = parse_problem("ic3ih4oc2kh1n\"lab-cnn:conv1\"");
  CHECK(named.name == "lab-cnn:conv1");
  CHECK(to_string(named) == "mb2ic3ih4oc2oh4kh1n\"lab-cnn:conv1\"");
  CHECK(parse_problem("g32mb1ic32ih16oc32oh16kh3ph1").is_depthwise());
  CHECK(parse_problem("mb2ic8ih9oc8kh3dh1").out_h() == 5);  // effective extent 5
  CHECK(parse_problem("mb2ic8ih9oc8kh3dh1").dilation_h == 2);  // stored as PyTorch's step between taps
}

TEST_CASE("problem: malformed descriptors name the offending token") {
  struct Bad {
    const char* text;
    const char* message;
  };
  const Bad bad[] = {
      {"mb32ic64ih56oc64xy3kh3", "token 'xy3' is not a field"},
      {"ic3ih7oc16kh", "token 'kh' has no value"},
      {"ic3ih7oc16kh3kh5", "token 'kh5' repeats a field"},
      {"ic3id7ih7oc16kh3", "token 'id7' is a depth field"},
      {"ic3ih7oc16oh3kh3ph0", "token 'oh3' does not match the output height the other fields give: "
                              "(ih + 2 ph - (kh - 1)(dh + 1) - 1) / sh + 1 = (7 + 2*0 - 2*1 - 1) / 1 + 1 = 5, "
                              "and no padding of 0 or more after gives 3"},
      // Echoed as written, not recomputed (oh56 stays oh56 however kh0 would change it).
      {"mb1ic64ih56oc64oh56kh0", "bad problem descriptor 'mb1ic64ih56oc64oh56kh0': kh and kw must be at least 1"},
      {"ih7oc16kh3", "lacks ic"},
      {"ic3ih7kh3", "lacks oc"},
      {"ic3oc16kh3", "lacks ih"},
      {"ic3ih7oc16", "lacks kh"},
      {"ic3ih7oc16kh3sh0", "token 'sh0' must be at least 1"},
      {"ic3ih7oc16kh3n\"open", "has no closing quote"},
      {"ic3ih7oc16kh3mb99999999999999999999", "is out of range"},
      {"3ic", "has no field name"},
      {"g3ic4ih7oc6kh3", "ic 4 is not divisible by g 3"},
      {"ic3ih2oc4kh5", "larger than the padded input"},
      {"mb0ic3ih7oc4kh3", "mb must be at least 1"},
      // Found by tests/fuzz/fuzz_descriptor: a 2^38 kernel overflowed int64 computing the output size.
      {"mb32ic64ih56oc64oh56kh399999996161", "kh 399999996161 is out of range (at most 16777216)"},
      {"mb1099511627777ic3ih7oc4kh3", "token 'mb1099511627777' is out of range"},
      // Found by tests/fuzz/fuzz_descriptor: deducing the padding from oh overflowed int64.
      {"mb22312ic3ih32oc16oh1222222226kh3sh22222222222", "token 'oh1222222226' implies a padding out of range"},
      // Fields within range whose tensors are not: n*c*h*w would overflow int64.
      {"mb16777216ic16777216ih16777216oc1kh1", "a tensor would exceed 2^56 elements"},
  };
  for (const Bad& b : bad) {
    const std::string text = b.text;
    CAPTURE(text);
    try {
      parse_problem(b.text);
      FAIL("accepted a malformed descriptor");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(b.message) != std::string::npos);
    }
  }
}

TEST_CASE("problem: asymmetric padding, as benchdnn reads an output size with ph") {
  const ConvProblem same = parse_problem("mb1ic3ih224oc32oh112kh3sh2ph0");  // ONNX pads [0, 0, 1, 1]
  CHECK(same.pad_h == 0);
  CHECK(same.pad_bottom() == 1);
  CHECK(same.pad_right() == 1);
  CHECK(same.out_w() == 112);
  CHECK(same.has_padding());
  CHECK(same.padded_h() == 225);
  CHECK(to_string(same) == "mb1ic3ih224oc32oh112kh3sh2ph0");
  const ConvProblem less = parse_problem("mb1ic3ih7oc2oh6kh3ph1");  // 1 above, 0 below
  CHECK(less.pad_bottom() == 0);
  CHECK(less.padded_h() == 9);  // never less than the symmetric extent
  SUBCASE("with_end_padding is canonical: padding no window reads is dropped") {
    const ConvProblem base = parse_problem("mb1ic3ih224oc32kh3sh2ph0");
    CHECK(base.with_end_padding(1, 1) == same);
    CHECK(base.with_end_padding(2, 2) == same);  // the second row below is never read
    CHECK(base.with_end_padding(0, 0) == base);
    const ConvProblem floor = parse_problem("mb1ic3ih32oc8kh3sh2ph1");  // reads no bottom padding
    CHECK(floor.with_end_padding(0, 0) == floor);
    CHECK(floor.with_end_padding(0, 0).pad_bottom_delta == 0);
  }
  SUBCASE("a negative end padding is refused") {
    ConvProblem p = parse_problem("mb1ic3ih7oc2kh3");
    p.pad_bottom_delta = -1;
    CHECK_THROWS_WITH_AS(p.validate(), doctest::Contains("the bottom and right padding must not be negative"), InputError);
  }
}

TEST_CASE("problem: validate rejects a constructed problem too large to size, before printing it") {
  ConvProblem p = parse_problem("ic3ih7oc4kh3");
  p.dilation_h = std::int64_t{1} << 40;  // (kh - 1) * dilation * ... would overflow in to_string
  CHECK_THROWS_WITH_AS(p.validate(), doctest::Contains("out of range (at most 16777216)"), InputError);
}

TEST_CASE("problem: with_batch keeps everything but the batch") {
  const ConvProblem p = parse_problem("g2mb1ic4ih9oc6kh3sh2ph1dh1");
  const ConvProblem q = p.with_batch(32);
  CHECK(q.n == 32);
  CHECK(q.with_batch(1) == p);
  CHECK(q.bytes() == doctest::Approx(4.0 * (32 * 4 * 81 + 6 * 2 * 9 + 6 + 32 * 6 * p.out_h() * p.out_w())));
}

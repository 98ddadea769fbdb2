// The op tape and its replay: a real computation written by the engine's tape
// and replayed by the grader agrees with itself; a claim altered after the
// fact, a gradient set by hand, an error no op raised, and forged tapes
// (unknown ops, unknown tensors, too large, cut short) are all caught.
#include <gradlab/tape.h>
#include <torch/torch.h>

#include <set>
#include <string>

#include "../../grader/harness/facts_of.h"
#include "../../grader/harness/random_graphs.h"
#include "catch_compat.h"
#include "judge/replay.h"
#include "judge/replay_route.h"
#include "judge/tensor_set.h"

namespace {

using grader::json;

struct Lines : gradlab::tape::Sink {
  std::string text;
  void write(const std::string& event) override { text += event + "\n"; }
};

// Runs `body` with the tape on and returns what it wrote, with the result the
// harness would write for the tensors `body` names.
struct Recorded {
  std::string tape;
  json claimed;
};
template <class F>
Recorded record(F&& body) {
  Lines lines;
  lab::facts::Named named;
  gradlab::tape::start(&lines);
  body(named);
  gradlab::tape::stop();
  json tensors = json::object(), graphs = json::object();
  for (const auto& [n, t] : named) {
    tensors[n] = lab::facts::describe(t);
    if (t.grad_fn()) graphs[n] = lab::facts::graph_of(t, named);
  }
  return {lines.text, {{"status", "ok"}, {"tensors", tensors}, {"graphs", graphs}, {"records", json::array()}}};
}

void name(lab::facts::Named& named, const std::string& n, const torch::Tensor& t) {
  gradlab::tape::lab_record("name", n, &t);
  named.emplace_back(n, t);
}

// The lab's exercise 3, as a student writes it.
Recorded exercise3(bool by_hand = false) {
  return record([&](lab::facts::Named& named) {
    auto x = torch::tensor(-2.0, torch::requires_grad());
    auto y = torch::tensor(2.0, torch::requires_grad());
    auto z = torch::tensor(3.0, torch::requires_grad());
    auto p = x.pow(2);
    auto q = p + y;
    auto f = q * z;
    if (by_hand) x.mutable_grad() = torch::tensor(-12.0);
    else f.backward();
    name(named, "x", x);
    name(named, "f", f);
  });
}

}  // namespace

TEST_CASE("a real computation replays to the facts it claimed") {
  Recorded r = exercise3();
  REQUIRE(r.tape.find("\"op\":\"pow\"") != std::string::npos);
  grader::Verified v = grader::verify(r.tape, r.claimed, json::array());
  INFO(v.failure);
  REQUIRE(v.replayed);
  CHECK(v.mismatches.empty());
  CHECK(v.doc["tensors"]["x"]["grad"]["values"][0].get<double>() == -12.0);
  CHECK(v.doc["graphs"]["f"][0]["name"] == "MulBackward0");
  CHECK(v.doc["provenance"]["tensors"]["x"]["grad"] == "backward");
  CHECK(v.doc["provenance"]["tensors"]["x"]["root"] == "f");
}

TEST_CASE("values written into memory after the fact are caught") {
  Recorded r = exercise3();
  r.claimed["tensors"]["f"]["values"][0] = 17.0;
  r.claimed["tensors"]["x"]["grad"]["values"][0] = -11.0;
  grader::Verified v = grader::verify(r.tape, r.claimed, json::array());
  REQUIRE(v.replayed);
  REQUIRE(v.mismatches.size() == 2);
  CHECK(v.mismatches[0].what == "tensor x");
  CHECK(v.mismatches[0].field == "grad.values");
  CHECK(v.mismatches[1].what == "tensor f");
  // The checks read the computation, not the claim.
  CHECK(v.doc["tensors"]["f"]["values"][0].get<double>() == 18.0);
}

TEST_CASE("a gradient set by hand is followed, and named as such") {
  Recorded r = exercise3(/*by_hand=*/true);
  CHECK(r.tape.find("\"e\":\"set_grad\"") != std::string::npos);
  grader::Verified v = grader::verify(r.tape, r.claimed, json::array());
  REQUIRE(v.replayed);
  CHECK(v.mismatches.empty());
  CHECK(v.doc["provenance"]["tensors"]["x"]["grad"] == "set by hand");
}

TEST_CASE("an error record must be one an op raised") {
  Recorded r = record([&](lab::facts::Named&) {
    auto w = torch::ones({3}, torch::requires_grad());
    try {
      w.mul_(10);
    } catch (const std::exception& e) {
      gradlab::tape::lab_record("error", "provoked", nullptr, e.what());
    }
    gradlab::tape::lab_record("error", "typed", nullptr, "a leaf Variable that requires grad is being used in an in-place operation.");
  });
  r.claimed["records"] = json::array({{{"kind", "error"}, {"label", "provoked"}, {"message", "x"}}, {{"kind", "error"}, {"label", "typed"}, {"message", "x"}}});
  grader::Verified v = grader::verify(r.tape, r.claimed, json::array());
  REQUIRE(v.replayed);
  bool typed = false;
  for (const auto& m : v.mismatches)
    if (m.what == "record \"typed\"" && m.computed.find("no op") == 0) typed = true;
  CHECK(typed);
}

TEST_CASE("forged tapes are refused, not believed") {
  const json claimed = {{"status", "ok"}, {"tensors", json::object()}, {"graphs", json::object()}, {"records", json::array()}};
  SECTION("an op the replay does not know") {
    auto v = grader::verify("{\"e\":\"op\",\"op\":\"system\",\"sig\":\"\",\"args\":[]}\n", claimed, json::array());
    CHECK(!v.replayed);
    CHECK(v.failure.find("cannot redo") != std::string::npos);
  }
  SECTION("a tensor that was never made") {
    auto v = grader::verify("{\"e\":\"op\",\"op\":\"neg\",\"sig\":\"T\",\"args\":[42],\"out\":43}\n", claimed, json::array());
    CHECK(!v.replayed);
    CHECK(v.failure.find("never made") != std::string::npos);
  }
  SECTION("a tensor larger than the replay allows") {
    const std::string tape =
        "{\"e\":\"new\",\"op\":\"ones\",\"id\":1,\"shape\":[1],\"dtype\":\"Float\",\"requires_grad\":false,\"leaf\":true,"
        "\"grad_fn\":null,\"version\":0,\"values\":[1]}\n"
        "{\"e\":\"op\",\"op\":\"repeat\",\"sig\":\"TL\",\"args\":[1,[100000,100000]],\"out\":2}\n";
    auto v = grader::verify(tape, claimed, json::array());
    CHECK(!v.replayed);
    CHECK(v.failure.find("limit") != std::string::npos);
  }
  SECTION("a tape that overflowed") {
    auto v = grader::verify("{\"e\":\"overflow\"}\n", claimed, json::array());
    CHECK(!v.replayed);
    CHECK(v.failure.find("more than the grader can check") != std::string::npos);
  }
  SECTION("a line that is not JSON") {
    auto v = grader::verify("{\"e\":\"op\",\n", claimed, json::array());
    CHECK(!v.replayed);
  }
}

TEST_CASE("the channel splits into the tape and the result") {
  auto c = grader::split_channel("{\"e\":\"new\"}\n{\"e\":\"op\"}\n{\"status\":\"ok\"}");
  CHECK(c.tape == "{\"e\":\"new\"}\n{\"e\":\"op\"}\n");
  CHECK(c.result == "{\"status\":\"ok\"}");
  CHECK(grader::split_channel("{\"e\":\"new\"}\n").result.empty());  // cut short: no result
}

TEST_CASE("indexing, conversions and the wider API are taped and replay exactly") {
  using torch::indexing::Slice;
  Recorded r = record([&](lab::facts::Named& named) {
    auto w = torch::randn({4, 3}, torch::requires_grad());
    auto rows = w.index({Slice(1, 3), Slice()});
    auto picked = w.index({torch::tensor({0, 2})});
    auto d = rows.to(torch::kDouble).expand({2, 2, 3}).sum(0);
    auto g = w.gather(1, torch::tensor({{0}, {1}, {2}, {0}}));
    auto masked = torch::where(w > 0, w, torch::zeros({}));
    auto ce = torch::nn::functional::cross_entropy(w, torch::tensor({0, 1, 2, 1}));
    auto fused = torch::addcmul(torch::rsub(g, 1.5), g, torch::addcdiv(g, g, g.exp(), 2), 0.5);
    fused.addcmul_(g, g);
    auto loss = d.sum() + picked.cumsum(1).sum() + g.sum() * masked.amax({0, 1}) + ce + w.norm() +
                torch::rsub(fused, w.sum()).sum() + (2 - fused).sum();
    loss.backward();
    auto copy = w.detach().clone();
    copy.index_put_({0, 0}, 5.0);
    name(named, "w", w);
    name(named, "loss", loss);
    name(named, "copy", copy);
  });
  INFO(r.tape.substr(r.tape.find("\"e\":\"given\"") == std::string::npos ? 0 : r.tape.find("\"e\":\"given\"") - 2, 300));
  CHECK(r.tape.find("\"e\":\"given\"") == std::string::npos);  // everything it used is on the tape
  grader::Verified v = grader::verify(r.tape, r.claimed, json::array());
  INFO(v.failure);
  REQUIRE(v.replayed);
  for (const auto& m : v.mismatches) INFO(m.what + " " + m.field + ": " + m.claimed + " / " + m.computed);
  CHECK(v.mismatches.empty());
  CHECK(v.doc["provenance"]["tensors"]["copy"]["made_by"] == "clone");
  CHECK(v.doc["provenance"]["tensors"]["w"]["grad"] == "backward");
}

TEST_CASE("modules, random initialisation, dropout and an optimizer replay exactly") {
  Recorded r = record([&](lab::facts::Named& named) {
    torch::manual_seed(0);
    torch::nn::Linear layer(3, 2);
    torch::optim::SGD opt(layer->parameters(), torch::optim::SGDOptions(0.1));
    auto x = torch::randn({4, 3});
    for (int step = 0; step < 2; ++step) {
      opt.zero_grad();
      auto h = torch::dropout(layer->forward(x), 0.5, /*train=*/true);
      auto loss = h.pow(2).mean();
      loss.backward();
      opt.step();
    }
    name(named, "weight", layer->weight);
    name(named, "bias", layer->bias);
  });
  grader::Verified v = grader::verify(r.tape, r.claimed, json::array());
  INFO(v.failure);
  REQUIRE(v.replayed);
  for (const auto& m : v.mismatches) INFO(m.what + " " + m.field + ": " + m.claimed + " / " + m.computed);
  CHECK(v.mismatches.empty());
  CHECK(v.unverified.empty());
}

// A shadow replay gives a source other values and reads what follows from it.
// `a` depends on x, `b` only seems to (x times zero, plus typed numbers).
TEST_CASE("shadow replays tell numbers computed from a tensor from numbers that only read it") {
  Recorded r = record([&](lab::facts::Named& named) {
    auto x = torch::tensor({1.0, 2.0, 3.0}, torch::requires_grad());
    auto loss = (x * x).sum();
    loss.backward();
    auto a = x.detach() * 2;
    auto b = x.detach() * 0 + torch::tensor({2.0, 4.0, 6.0});
    auto w = torch::ones({3}, torch::requires_grad());
    (w * x.detach()).sum().backward();
    {
      torch::NoGradGuard no_grad;
      w -= 0.5 * w.grad();
    }
    name(named, "x", x);
    name(named, "a", a);
    name(named, "b", b);
    name(named, "w", w);
  });
  const std::vector<grader::Shadow> questions = {
      {"a-from-x", "x", false, "a"}, {"b-from-x", "x", false, "b"}, {"w-from-grad", "w", true, "w"},
      {"nobody", "y", false, "a"}};
  grader::Verified v = grader::verify(r.tape, r.claimed, json::array(), "", questions);
  INFO(v.failure);
  REQUIRE(v.replayed);
  CHECK(v.mismatches.empty());
  const json& s = v.doc["provenance"]["shadows"];
  const json base_a = v.doc["tensors"]["a"]["values"], base_b = v.doc["tensors"]["b"]["values"];
  CHECK(s["a-from-x"]["values"] != base_a);  // a moved with x
  CHECK(s["b-from-x"]["values"] == base_b);  // b did not
  // w took one step (a gradient, then an update from it): its shadow changes
  // that gradient and reads w right after the update.
  REQUIRE(s["w-from-grad"]["taken"] == 1);
  CHECK(s["w-from-grad"]["steps"][0]["values"] != v.doc["tensors"]["w"]["values"]);
  CHECK(s["nobody"]["failed"] == "y was never named");
  // The same questions of the same computation get the same answers.
  grader::Verified again = grader::verify(r.tape, r.claimed, json::array(), "", questions);
  CHECK(again.doc["provenance"]["shadows"] == s);
  // The base replay's facts are not touched by its shadows.
  CHECK(v.doc["tensors"]["a"]["values"] == json({2.0, 4.0, 6.0}));
}

TEST_CASE("a records shadow tells a loss read from the parameters from one multiplied away") {
  // Two steps of descent on w; each step records its loss twice: as read
  // (item()), and as the same number passed through loss * 0 + typed.
  json claimed_records = json::array();
  Recorded r = record([&](lab::facts::Named& named) {
    auto x = torch::tensor({1.0, 2.0});
    auto w = torch::tensor({0.5}, torch::requires_grad());
    for (int step = 0; step < 2; ++step) {
      auto loss = ((x * w - 1) * (x * w - 1)).sum();
      auto put = [&](const char* label, double v) {
        gradlab::tape::lab_record("value", label, nullptr, "", v);
        claimed_records.push_back({{"kind", "value"}, {"label", label}, {"value", v}});
      };
      // (A record is tied to the latest item() that gave its number.)
      const double read = loss.item<double>();
      put("read", read);
      put("typed", (loss * 0 + read).item<double>());
      loss.backward();
      torch::NoGradGuard no_grad;
      w -= 0.1 * w.grad();
      w.grad().zero_();
    }
    name(named, "w", w);
  });
  r.claimed["records"] = claimed_records;
  const std::vector<grader::Shadow> questions = {{"read", "w", false, "", {"read"}}, {"typed", "w", false, "", {"typed"}}};
  grader::Verified v = grader::verify(r.tape, r.claimed, json::array(), "", questions);
  INFO(v.failure);
  REQUIRE(v.replayed);
  CHECK(v.mismatches.empty());
  const json& s = v.doc["provenance"]["shadows"];
  json read = json::array(), typed = json::array();
  for (const auto& rec : v.doc["records"]) (rec["label"] == "read" ? read : typed).push_back(rec["value"]);
  REQUIRE(s["read"]["records"].size() == 2);
  REQUIRE(s["typed"]["records"].size() == 2);
  // Each record's own version of w (as made, then after one step) is given
  // other values: the loss read from it moves, the typed one does not.
  for (size_t k = 0; k < 2; ++k) {
    CHECK(s["read"]["records"][k] != read[k]);
    CHECK(s["typed"]["records"][k] == typed[k]);
  }
  // The base replay's records keep the program's numbers.
  CHECK(read == typed);
}

// The graphs a walk probe makes up (grader/harness/random_graphs.h): the same
// seed gives the same graph on both sides, and seeds give many shapes, each
// with a graph to walk.
TEST_CASE("made-up graphs are the same for a seed, and many for many seeds", "[probes]") {
  namespace g = lab::probes::graphs;
  std::set<std::string> shapes;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const g::Built one = g::random_graph(seed), again = g::random_graph(seed);
    REQUIRE(one.root.grad_fn() != nullptr);
    CHECK(one.expression == again.expression);
    CHECK(one.root.item<double>() == again.root.item<double>());
    shapes.insert(one.expression);
  }
  CHECK(shapes.size() > 150);
}

// The curvature of a backward's root (replay_route.h): the same gradient at a
// point from two functions of w is told apart by how the root curves, the
// program's graph survives the probe, and a retain_grad's .grad is put back.
TEST_CASE("curvature: a stand-in with the loss's gradient curves otherwise", "[grader][replay]") {
  using grader::replay::curvature_of;
  using grader::replay::routes_agree;
  using grader::replay::Curvature;
  const torch::Tensor x = torch::tensor({1.0, 2.0, 3.0, 4.0}), y = 2 * x + 1;
  torch::Tensor w = torch::tensor({0.5}, torch::requires_grad());
  torch::Tensor pred = x * w;
  pred.retain_grad();
  const torch::Tensor loss = torch::mse_loss(pred, y);
  // The stand-in: mse_loss(w, w0 - g/2) has gradient g at w0.
  const double g = (2 * (x * 0.5 - y) * x).mean().item<double>();
  const torch::Tensor standin = torch::mse_loss(w, torch::tensor({0.5 - g / 2}));
  const auto a = curvature_of(loss, {}, {w}, {w, pred}), b = curvature_of(standin, {}, {w}, {w, pred});
  REQUIRE(a.count(w.unsafeGetTensorImpl()));
  REQUIRE(b.count(w.unsafeGetTensorImpl()));
  const std::string ra = "Prod{X}@" + a.at(w.unsafeGetTensorImpl()), rb = "Prod{X}@" + b.at(w.unsafeGetTensorImpl());
  CHECK_FALSE(routes_agree(ra, rb, Curvature::Row));
  CHECK(routes_agree(ra, rb, Curvature::Off));  // without the option, the ops alone
  CHECK(routes_agree(ra, "Prod{X}@" + curvature_of((x * w - y).pow(2).sum() / 4, {}, {w}, {w}).at(w.unsafeGetTensorImpl()), Curvature::Row));
  // (the program's route first, the reference's second)
  CHECK_FALSE(routes_agree("Prod{X}", ra, Curvature::Row));  // the program's root could not be probed
  CHECK(routes_agree(ra, "Prod{X}", Curvature::Row));        // the reference's could not: nothing to hold it to
  // The probe left the graph whole and wrote no gradient anywhere.
  CHECK_FALSE(pred.grad().defined());
  CHECK_FALSE(w.grad().defined());
  loss.backward();
  CHECK(w.grad().item<double>() == Approx(g));
  // d²/dw² of mean((x·w − y)²) is 2·mean(x²) = 15; of the stand-in, 2.
  const std::string ca = a.at(w.unsafeGetTensorImpl()), cb = b.at(w.unsafeGetTensorImpl());
  CHECK(std::stod(ca) / std::stod(cb) == Approx(7.5));
}

// Curvature says something about two functions only at one point: at other
// values, or with a leaf of the reference's that does not require grad, an
// honest wrong answer curves otherwise too, and is not held to it. A kept
// intermediate (retain_grad) is probed too: the tangent plane 3q + 6z − 18
// has f = q·z's gradient 3 at q, but one that does not move with z. A leaf
// nudged by 1e-5, or one the root leaves out, does not switch it off.
TEST_CASE("curvature: compared at the reference's point only, and at kept intermediates", "[grader][replay]") {
  using grader::replay::curvature_of;
  using grader::replay::routes_agree;
  using grader::replay::Curvature;
  auto f_of = [](double xv, bool y_tracked, bool tangent) {
    torch::Tensor x = torch::tensor(xv, torch::requires_grad());
    torch::Tensor y = y_tracked ? torch::tensor(2.0, torch::requires_grad()) : torch::tensor(2.0);
    torch::Tensor z = torch::tensor(3.0, torch::requires_grad());
    torch::Tensor q = x.pow(2) + y;
    q.retain_grad();
    torch::Tensor f = tangent ? 3 * q + 6 * z - 18 : q * z;
    std::vector<torch::Tensor> leaves{x, z};
    if (y_tracked) leaves.push_back(y);
    const auto c = curvature_of(f, {}, leaves, {x, y, z, q});
    return std::pair{c.count(z.unsafeGetTensorImpl()) ? "X@" + c.at(z.unsafeGetTensorImpl()) : std::string(),
                     c.count(q.unsafeGetTensorImpl()) ? "X@" + c.at(q.unsafeGetTensorImpl()) : std::string()};
  };
  const auto ref = f_of(-2, true, false), tangent = f_of(-2, true, true);
  REQUIRE(!ref.first.empty());
  REQUIRE(!ref.second.empty());
  REQUIRE(!tangent.second.empty());
  CHECK(routes_agree(f_of(-2, true, false).first, ref.first, Curvature::Row));  // the same function, the same numbers
  CHECK_FALSE(routes_agree(tangent.first, ref.first, Curvature::Row));         // z's row: 0 where q·z's is not
  CHECK_FALSE(routes_agree(tangent.second, ref.second, Curvature::Row));       // q's gradient is constant in the tangent
  CHECK(routes_agree(f_of(2, true, false).first, ref.first, Curvature::Row));   // x = 2: another point, not compared
  CHECK(routes_agree(f_of(-2, false, false).first, ref.first, Curvature::Row)); // y untracked: the reference's leaf is missing
  CHECK_FALSE(routes_agree(f_of(2, true, false).first, f_of(2, true, true).first, Curvature::Row));  // at one point, compared
  // Near the point (x nudged by 1e-5): still compared, within 1e-2.
  CHECK(routes_agree(f_of(-2.00001, true, false).first, ref.first, Curvature::Row));
  CHECK_FALSE(routes_agree(f_of(-2.00001, true, true).first, ref.first, Curvature::Row));
  // A root that reaches only some of the leaves that require grad is held to
  // them all: w's stand-in mse_loss(w, c) beside an untouched b is not the
  // loss of (w, b).
  torch::Tensor w = torch::tensor(0.5, torch::requires_grad()), b = torch::tensor(0.0, torch::requires_grad());
  const torch::Tensor x = torch::tensor({1.0, 2.0}), y = 2 * x + 1;
  const torch::Tensor loss = torch::mse_loss(x * w + b, y);
  const double g = (2 * (x * 0.5 - y) * x).mean().item<double>();
  const torch::Tensor standin = torch::mse_loss(w, torch::tensor(0.5 - g / 2));
  const std::string real = "Prod{X}@" + curvature_of(loss, {}, {w, b}, {w, b}).at(w.unsafeGetTensorImpl()),
                    alone = "Prod{X}@" + curvature_of(standin, {}, {w, b}, {w, b}).at(w.unsafeGetTensorImpl());
  CHECK_FALSE(routes_agree(alone, real, Curvature::Row));
}

// A leaf's own block of the Hessian ("curvature": "own"): the discriminator's
// loss Σσ(D·fake) with fake left attached reaches G_w too, and its cross
// terms make D's row differ from the detached loss's, though D's gradient and
// how it moves with D are the same; a stand-in Σσ(D)·c, with c worked out by
// hand from a detached D, curves otherwise in D itself (red team 14).
TEST_CASE("own curvature: a fake left attached is the loss in D, a stand-in is not", "[grader][replay]") {
  using grader::replay::curvature_of;
  using grader::replay::routes_agree;
  using grader::replay::Curvature;
  torch::manual_seed(0);
  const torch::Tensor z = torch::randn({4});
  torch::Tensor G = torch::randn({4}, torch::requires_grad()), D = torch::randn({4}, torch::requires_grad());
  const torch::Tensor fake = G * z;
  auto route = [&](const torch::Tensor& root) {
    return "Sum{X}@" + curvature_of(root, {}, {G, D}, {G, D}).at(D.unsafeGetTensorImpl());
  };
  const std::string detached = route(torch::sigmoid(D * fake.detach()).sum()),
                    attached = route(torch::sigmoid(D * fake).sum());
  const torch::Tensor s = torch::sigmoid(D.detach() * fake.detach()), sd = torch::sigmoid(D.detach());
  const std::string standin = route((torch::sigmoid(D) * (s * (1 - s) * fake.detach() / (sd * (1 - sd)))).sum());
  CHECK(routes_agree(attached, detached, Curvature::Own));
  CHECK_FALSE(routes_agree(attached, detached, Curvature::Row));  // G's cross terms
  CHECK_FALSE(routes_agree(standin, detached, Curvature::Own));
  CHECK(routes_agree(standin, detached, Curvature::Off));  // the ops alone: the same route label here
}

// The program's reads of a backward graph are on the tape (grad_fn, edges,
// name) and the replay follows them on its own graph: a walk of d reads
// every node's name; typed text reads none; a walk of a throwaway graph of
// the same shape reads the throwaway's, and none of d's.
TEST_CASE("a walk of d's graph is the program reading d's nodes", "[grader][replay]") {
  auto walk = [](const std::shared_ptr<torch::autograd::Node>& root) {
    std::vector<std::shared_ptr<torch::autograd::Node>> stack{root};
    std::string out;
    while (!stack.empty()) {
      auto n = stack.back();
      stack.pop_back();
      if (!n) continue;
      out += n->name() + "\n";
      for (size_t i = 0; i < n->num_outputs(); ++i) stack.push_back(n->next_edge(i).function);
    }
    return out;
  };
  auto run = [&](int how) {
    return record([&](lab::facts::Named& named) {
      auto a = torch::tensor(1.0, torch::requires_grad()), b = torch::tensor(2.0, torch::requires_grad());
      auto d = (a + b) * a;
      if (how == 1) walk(d.grad_fn());
      if (how == 2) {
        auto p = torch::tensor(5.0, torch::requires_grad()), q = torch::tensor(7.0, torch::requires_grad());
        walk(((p + q) * p).grad_fn());
      }
      d.backward();
      name(named, "d", d);
    });
  };
  for (int how : {0, 1, 2}) {
    Recorded r = run(how);
    grader::Verified v = grader::verify(r.tape, r.claimed, json::array());
    INFO("how " << how << ": " << v.failure);
    REQUIRE(v.replayed);
    const json walked = v.doc["provenance"]["tensors"]["d"]["walked"];
    CHECK(walked["nodes"] == 4);
    CHECK(walked["names_read"] == (how == 1 ? 4 : 0));
  }
}

// What a replayed tensor was computed from (tensor_set.h): shared, not copied,
// along a chain; an in-place change after a tensor was used leaves what was
// computed before it as it was.
TEST_CASE("a tensor set shares its inputs' sets and keeps what it held before a change", "[grader][replay]") {
  using grader::replay::TensorSet;
  int cells[4] = {};
  auto e = [&](int k) { return reinterpret_cast<TensorSet::Elem>(&cells[k]); };
  TensorSet w, y;
  w.insert(e(0));
  y.insert(e(1));
  y.merge(w);  // y computed from w
  CHECK(y.contains(e(0)));
  CHECK(y.items().size() == 2);
  w.insert(e(2));  // w changed in place after y was made from it
  CHECK(w.contains(e(2)));
  CHECK_FALSE(y.contains(e(2)));
  w.merge(w);  // x.add_(x): nothing new, and no loop
  CHECK(w.items().size() == 2);
  TensorSet empty;
  CHECK(empty.items().empty());
  y.merge(empty);
  CHECK(y.items().size() == 2);
  // A chain far deeper than any call stack is walked and freed, and every
  // link holds the first element (an earlier version kept 512 of them, in
  // pointer order).
  std::vector<int> chain(200000);
  TensorSet tail;
  tail.insert(e(3));
  for (int& c : chain) {
    TensorSet next;
    next.insert(reinterpret_cast<TensorSet::Elem>(&c));
    next.merge(tail);
    tail = next;
  }
  CHECK(tail.contains(e(3)));
  CHECK(tail.items().size() == chain.size() + 1);
}

TEST_CASE("a number read at the end of a long chain is read from the tensor the chain began at", "[grader][replay]") {
  json claimed_records = json::array();
  Recorded r = record([&](lab::facts::Named& named) {
    auto w = torch::tensor({0.5}, torch::requires_grad());
    auto c = w * 1.0;
    for (int k = 0; k < 2000; ++k) c = c + 0.0;
    auto put = [&](const char* label, double v) {
      gradlab::tape::lab_record("value", label, nullptr, "", v);
      claimed_records.push_back({{"kind", "value"}, {"label", label}, {"value", v}});
    };
    put("read", c.sum().item<double>());
    auto typed = torch::tensor({0.25});
    for (int k = 0; k < 2000; ++k) typed = typed + 0.0;
    put("typed", typed.sum().item<double>());
    name(named, "w", w);
  });
  r.claimed["records"] = claimed_records;
  grader::Verified v = grader::verify(r.tape, r.claimed, json::array());
  INFO(v.failure);
  REQUIRE(v.replayed);
  // The typed number's chain never met w: one problem, about it alone.
  REQUIRE(v.mismatches.size() == 1);
  CHECK(v.mismatches[0].what == "record \"typed\"");
}

// Reference solution for exercise 12: detach in a GAN step, and
// relu(d.detach()) + c versus relu(d) + c.
#include <gradlab/lab.h>

void exercise12(lab::Lab& lab) {
  torch::manual_seed(static_cast<uint64_t>(lab.given("seed")));  // the lesson's 0, or the variant's
  torch::Tensor z = torch::randn({4});
  torch::Tensor G_w = torch::randn({4}, torch::requires_grad());
  torch::Tensor D_w = torch::randn({4}, torch::requires_grad());
  torch::Tensor fake = G_w * z;
  torch::Tensor d_loss, g_loss;
  torch::Tensor a, b, c, d, e, f;  // part 3's
  lab::Names names(lab, {{"G_w", G_w}, {"D_w", D_w}, {"d_loss", d_loss}, {"g_loss", g_loss}, {"a", a},
                          {"b", b}, {"c", c}, {"d", d}, {"e", e}, {"f", f}});

  d_loss = torch::sigmoid(D_w * fake.detach()).sum();
  d_loss.backward();
  lab.snapshot("G_w.grad after the D step", G_w.grad());
  lab.snapshot("D_w.grad after the D step", D_w.grad());

  g_loss = -torch::sigmoid(D_w * fake).sum();
  lab.attempt("generator step", [&] { g_loss.backward(); });
  lab.snapshot("G_w.grad after the G step", G_w.grad());

  a = torch::tensor(1.0, torch::requires_grad());
  b = torch::tensor(2.0, torch::requires_grad());
  c = torch::tensor(3.0, torch::requires_grad());
  d = a + b;
  e = torch::relu(d.detach()) + c;
  e.backward();
  f = torch::relu(d) + c;
  f.backward();
}

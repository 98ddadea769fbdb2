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

  d_loss = torch::sigmoid(D_w * fake.detach()).sum();
  d_loss.backward();
  lab.snapshot("G_w.grad after the D step", G_w.grad());
  lab.snapshot("D_w.grad after the D step", D_w.grad());

  g_loss = -torch::sigmoid(D_w * fake).sum();
  lab.attempt("generator step", [&] { g_loss.backward(); });
  lab.snapshot("G_w.grad after the G step", G_w.grad());

  torch::Tensor a = torch::tensor(1.0, torch::requires_grad());
  torch::Tensor b = torch::tensor(2.0, torch::requires_grad());
  torch::Tensor c = torch::tensor(3.0, torch::requires_grad());
  torch::Tensor d = a + b;
  torch::Tensor e, f;
  e = torch::relu(d.detach()) + c;
  e.backward();
  f = torch::relu(d) + c;
  f.backward();

  lab.name("G_w", G_w);
  lab.name("D_w", D_w);
  lab.name("d_loss", d_loss);
  lab.name("g_loss", g_loss);
  lab.name("a", a);
  lab.name("b", b);
  lab.name("c", c);
  lab.name("d", d);
  lab.name("e", e);
  lab.name("f", f);
}

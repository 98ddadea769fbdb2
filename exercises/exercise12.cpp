// Exercise 12 — detach in a GAN's training step.
//
// A GAN trains two models in turn on the same fake samples. Here both are as
// small as models get (one weight vector each), but the bookkeeping is the
// real one: the generator makes fake = G_w·z; the discriminator scores a
// sample s as sigmoid(D_w·s).
//
//   1. The discriminator's step must not reach into the generator. Score
//      fake.detach(), d_loss = Σ sigmoid(D_w·fake.detach()), and
//      backpropagate from d_loss. G_w gets no gradient; D_w does.
//   2. The generator's step goes through the discriminator to the generator:
//      g_loss = −Σ sigmoid(D_w·fake), using fake itself. Run its backward
//      inside lab.attempt("generator step", [&] { ... }). This works only
//      because step 1 detached: otherwise step 1's backward would have
//      freed fake's part of the graph.
//   3. The lessons' small version: with a = 1, b = 2, c = 3 (all require
//      grad) and d = a + b, build e = relu(d.detach()) + c and
//      f = relu(d) + c. Backpropagate from e, then from f. e's graph has no
//      branch into d, so only f gives a and b a gradient (1 each); c gets 1
//      from each (2 in all).
//
// Submit: fill in the blanks, then run `./grade exercise12`.
#include <gradlab/lab.h>

void exercise12(lab::Lab& lab) {
  torch::manual_seed(0);
  torch::Tensor z = torch::randn({4});
  torch::Tensor G_w = torch::randn({4}, torch::requires_grad());
  torch::Tensor D_w = torch::randn({4}, torch::requires_grad());
  torch::Tensor fake = G_w * z;
  torch::Tensor d_loss, g_loss;
  torch::Tensor a, b, c, d, e, f;  // part 3's
  lab::Names names(lab, {{"G_w", G_w}, {"D_w", D_w}, {"d_loss", d_loss}, {"g_loss", g_loss}, {"a", a},
                          {"b", b}, {"c", c}, {"d", d}, {"e", e}, {"f", f}});

  // START CODE HERE
  // 1. The discriminator's step (2 lines).

  // END CODE HERE
  lab.snapshot("G_w.grad after the D step", G_w.grad());
  lab.snapshot("D_w.grad after the D step", D_w.grad());

  // START CODE HERE
  // 2. The generator's step, its backward inside lab.attempt (2 lines).

  // END CODE HERE
  lab.snapshot("G_w.grad after the G step", G_w.grad());

  a = torch::tensor(1.0, torch::requires_grad());
  b = torch::tensor(2.0, torch::requires_grad());
  c = torch::tensor(3.0, torch::requires_grad());
  d = a + b;
  // START CODE HERE
  // 3. e, then its backward; f, then its backward (4 lines).

  // END CODE HERE
}

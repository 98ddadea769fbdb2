#!/usr/bin/env python3
"""Runs the fuzzer's programs (`fuzz --python` writes them) on PyTorch and
prints the facts fuzz.cpp prints, one JSON line each, so that compare.cpp can
hold the engine's run to PyTorch's.

The ops are spelled in Python as C++ spells them (fuzz_program.h): a
number reaches the Scalar overload C++ calls. What the two APIs still read
differently is mapped here, and only that: Python's name of a tensor type in
an error message (CPP_TYPE_NAMES), and is_leaf, which Python reads through
grad_fn (raising for a view made under no_grad whose base changed since)
where C++ reads the stored node (null for such a view: a leaf).

usage: fuzz --python [--seed S] [--count N] | python3 fuzz_pytorch.py
"""
import json
import math
import os
import sys

import torch

# Python's name of a tensor type in an error message, and C++'s.
CPP_TYPE_NAMES = {"torch.FloatTensor": "CPUFloatType"}

pool = []
NO_GRAD_VIEW = "A view was created in no_grad mode"


def numbers(t):
    return [v if math.isfinite(v) else None for v in t.detach().double().reshape(-1).tolist()]


def emit(label, fact):
    fact["label"] = label
    print(json.dumps(fact, sort_keys=True, separators=(",", ":")))


def first_line(e):
    line = str(e).split("\n")[0]
    for python, cpp in CPP_TYPE_NAMES.items():
        line = line.replace(python, cpp)
    return line


def fact(label, t):
    try:
        name = t.grad_fn.name() if t.grad_fn is not None else None
        emit(label, {"shape": list(t.shape), "requires_grad": t.requires_grad, "is_leaf": t.is_leaf,
                     "grad_fn": name, "version": t._version, "values": numbers(t)})
    except Exception as e:  # noqa: BLE001 (reading can raise: that is the fact)
        emit(label, {"reading raised": first_line(e)})


def is_leaf(t):
    try:
        return t.is_leaf
    except RuntimeError as e:
        if NO_GRAD_VIEW in str(e):
            return True  # C++'s is_leaf(): the stored node, which such a view never had
        raise


def grads(label):
    out = {}
    for i, t in enumerate(pool):
        if t is None:
            continue
        try:
            if not (is_leaf(t) or t.retains_grad):
                continue
            out[str(i)] = numbers(t.grad) if t.grad is not None else None
        except Exception as e:  # noqa: BLE001
            out[str(i)] = "reading raised: " + first_line(e)
    emit(label, {"grads": out})


def missing(operands):
    return any(pool[i] is None for i in operands)


def made(label, operands, no_grad, fn):
    if missing(operands):
        pool.append(None)
        emit(label, {"skipped": True})
        return
    try:
        with torch.set_grad_enabled(not no_grad):
            t = fn()
    except Exception as e:  # noqa: BLE001 (every error is a fact)
        emit(label, {"raised": first_line(e)})
        pool.append(None)
        return
    pool.append(t)
    fact(label, t)


def attempt(label, operands, fn):
    if missing(operands):
        emit(label, {"skipped": True})
        return False
    try:
        fn()
        emit(label, {"raised": False})
    except Exception as e:  # noqa: BLE001
        emit(label, {"raised": first_line(e)})
    return True


def inplace(label, operands, no_grad, fn):
    def run():
        with torch.set_grad_enabled(not no_grad):
            fn()
    if attempt(label, operands, run):
        fact(label + " after", pool[operands[0]])


def backward(label, a, fn):
    if attempt(label, [a], fn):
        grads(label + " grads")


def zero_grads(label):
    def run():
        for t in pool:
            if t is not None and is_leaf(t) and t.grad is not None:
                t.grad.zero_()
    attempt(label, [], run)
    grads(label + " grads")


def main():
    program = sys.stdin.read()
    # Each program starts with `pool = []` and runs in a child of its own:
    # PyTorch 1.13 itself crashes on a few (retain_grad() on a view of a view
    # of a leaf changed in place under no_grad), which is then said.
    for chunk in program.split("pool = []\n")[1:]:
        label = chunk.split("'", 2)[1].split("/")[0]
        sys.stdout.flush()
        child = os.fork()
        if child == 0:
            pool.clear()
            exec(chunk, globals())  # noqa: S102 (our own generator's text)
            sys.stdout.flush()
            os._exit(0)
        _, status = os.waitpid(child, 0)
        if os.WIFSIGNALED(status) or os.WEXITSTATUS(status) != 0:
            what = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
            emit(label, {"crashed": what})


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Random small sharded HLO modules for differential testing of the SPMD partitioner (stdlib only).

`generate(seed)` returns a `Program`: 1-3 entry parameters (mostly f32, sometimes s32 or bf16, rank 1-3, dims
1..12 so that many shards are uneven), then a chain of 3-12 ops drawn from elementwise unary/binary ops,
compare+select, broadcast, transpose, reshape, reduce, dot, slice, concatenate, pad, reverse, iota, constant,
dynamic-slice (constant indices, sometimes out of range so they clamp), convert, sort, while loops with a counter
and calls. A random subset of instructions (parameters, chain ops, the root, loop states, instructions inside called
computations) carries a random sharding over num_partitions in {2, 4, 8}: replicated, maximal, tiled with an
explicit shuffled device list or an iota list (optionally transposed), partially replicated, or a tuple sharding.

`Program.render()` prints the module in XLA's long form. The program stays structured (instructions with named
operands) so that run_spmd_fuzz.py can shrink a failing one: drop shardings, bypass instructions, move the root.

Values carry a rough bound on their magnitude so that floating-point results stay finite and reductions stay within
the driver's tolerance; bf16 values are converted to f32 before a sum or a dot (partial sums rounded to bf16 would
legitimately differ from one sum).

With compiler=True (the compiler fuzzer, docs/compiler_fuzzing.md) the same program is printed without shardings
on one partition, and a random subset of array values (parameters, intermediates, values inside called computations)
gets a random non-default layout, drawn from a second random stream so that the sharded modules stay unchanged;
about a third of the modules use larger dimensions (up to 40, vector-width remainders such as 15, 17, 31, 33).

CLI: gen_spmd_module.py SEED [--compiler] [-o FILE] prints (or writes) the module for SEED.
"""

import argparse
import contextlib
import math
import random
import re
import sys

from spmd_program import (FLOATS, MAX_ELEMENTS, MAX_MAG, MAX_RANK, Inst, Program, Skip, device_list,
                          fmt_float, is_tuple, layout, literal_text, num_elements, prime_factors,
                          random_sharding, sharding_tiling_dim, type_str)
from gen_control_flow_ops import ControlFlowOps
from gen_window_ops import WindowAndIndexOps


# ---------------------------------------------------------------------------------------------------------------
# The generator.

class Generator(WindowAndIndexOps, ControlFlowOps):
    def __init__(self, seed, compiler=False):
        self.rng = random.Random(seed)
        rng = self.rng
        self.n = rng.choice([2, 2, 4, 4, 4, 8, 8])
        self.compiler = compiler
        self.layout_rng = random.Random(seed * 7919 + 17)
        self.layout_prob = self.layout_rng.choice([0.0, 0.25, 0.5, 0.8])
        # Compiler fuzzing: some modules have larger dimensions (vector widths, remainders, GEMM tiles).
        self.big = compiler and self.layout_rng.random() < 0.35
        self.max_elements = 16384 if self.big else MAX_ELEMENTS
        self.p = self.new_program()
        self.counter = 0
        self.shard_prob = rng.choice([0.15, 0.3, 0.45, 0.6, 0.8])
        self.num_params = 0
        self.max_params = 3
        self.depth = 0  # nesting of the computation being built (0: entry)
        self.extra_outputs = []
        self.callees = {}  # type -> names of one-parameter callees

    # -- helpers --
    def new_program(self):
        p = Program(self.n)
        if self.compiler:
            p.unsharded = True
            p.layout_rng, p.layout_prob = self.layout_rng, self.layout_prob
        return p

    def fresh(self, base):
        self.counter += 1
        return "%s.%d" % (base, self.counter)

    def maybe_shard(self, inst, prob=None):
        if prob is None:
            prob = self.shard_prob
        if self.rng.random() < prob:
            inst.sharding = random_sharding(self.rng, inst.ty, self.n)
        return inst

    def emit(self, base, ty, opcode, operands=(), attrs="", mag=1.0, comps=(), shard=True):
        if not is_tuple(ty) and num_elements(ty[1]) > self.max_elements:
            raise Skip("too large")
        if mag > MAX_MAG:
            raise Skip("magnitude")
        inst = self.p.add(Inst(self.fresh(base), ty, opcode, operands, attrs, mag, comps=comps))
        if shard:
            self.maybe_shard(inst)
        return inst

    def rand_dims(self, rank=None):
        if rank is None:
            rank = self.rng.choice([1, 2, 2, 2, 3, 3])
        if self.big:
            while True:  # parameters (outside the ops' Skip handling) must fit too
                dims = tuple(self.rng.choice([1, 3, 8, 15, 16, 17, 24, 31, 32, 33, 40]) for _ in range(rank))
                if num_elements(dims) <= self.max_elements:
                    return dims
        return tuple(self.rng.choice([1, 2, 3, 4, 4, 5, 6, 6, 7, 8, 8, 9, 10, 11, 12]) for _ in range(rank))

    def rand_dtype(self):
        r = self.rng.random()
        return "f32" if r < 0.72 else ("s32" if r < 0.87 else "bf16")

    def param(self, ty, prob=0.7):
        k = self.num_params
        self.num_params += 1
        inst = self.p.add(Inst("p%d" % k, ty, "parameter", mag=1.0 if ty[0] in FLOATS else 8.0, param_index=k))
        self.maybe_shard(inst, prob)
        return inst

    def constant(self, dtype, value, shard=False):
        text = fmt_float(value) if dtype in FLOATS else str(int(value))
        # Reduction identities (-inf, INT_MIN) never end up in a result on their own.
        mag = abs(value) if abs(value) < 1e9 else 0.0
        return self.emit("c", (dtype, ()), "constant", attrs=text, mag=mag, shard=shard)

    def arrays(self, pred=lambda v: True):
        """Values the chain may use as operands (not tuples, predicates or scalar constants)."""
        return [i for i in self.p.insts if not is_tuple(i.ty) and i.ty[0] != "pred"
                and not (i.opcode == "constant" and not i.ty[1]) and pred(i)]

    def pick(self, cur, pred=lambda v: True):
        if cur is not None and self.rng.random() < 0.75 and pred(cur):
            return cur
        cands = self.arrays(pred)
        if not cands:
            raise Skip("no operand")
        return self.rng.choice(cands)

    def value_of(self, ty, avoid=None):
        """Some value of exactly type ty: an existing one, a new parameter, a reshape, an iota or a constant."""
        rng = self.rng
        dtype, dims = ty
        same = [i for i in self.arrays(lambda v: v.ty == ty) if i is not avoid]
        r = rng.random()
        if same and r < 0.4:
            return rng.choice(same)
        if self.num_params < self.max_params and r < 0.7:
            return self.param(ty)
        n = num_elements(dims)
        reshapable = self.arrays(lambda v: v.ty[0] == dtype and num_elements(v.ty[1]) == n and v.ty[1] != dims)
        if reshapable and rng.random() < 0.5:
            src = rng.choice(reshapable)
            return self.emit("reshape", ty, "reshape", [src.name], mag=src.mag)
        if dims and n <= 24 and rng.random() < 0.5:
            return self.emit("constant", ty, "constant", attrs=literal_text(rng, dtype, dims), mag=7.0)
        if dims and rng.random() < 0.6:
            d = rng.randrange(len(dims))
            return self.emit("iota", ty, "iota", attrs=", iota_dimension=%d" % d, mag=float(dims[d]))
        c = self.constant(dtype, rng.choice([0.5, 1, 2, -1]) if dtype in FLOATS else rng.randint(-3, 3))
        return self.emit("broadcast", ty, "broadcast", [c.name], attrs=", dimensions={}", mag=c.mag)

    def to_summable(self, x):
        """bf16 sums/dots would round partial sums: compute them in f32."""
        if x.ty[0] == "bf16":
            return self.emit("convert", ("f32", x.ty[1]), "convert", [x.name], mag=x.mag)
        return x

    def scalar_comp(self, kind, dtype):
        name = "%s_%s" % (kind, dtype)
        if name not in self.p.comps:
            if kind in ("add", "max", "min"):
                op = {"add": "add", "max": "maximum", "min": "minimum"}[kind]
                text = ("%%%s (a: %s[], b: %s[]) -> %s[] {\n"
                        "  %%%s.a = %s[] parameter(0)\n"
                        "  %%%s.b = %s[] parameter(1)\n"
                        "  ROOT %%%s.r = %s[] %s(%s[] %%%s.a, %s[] %%%s.b)\n}") % (
                    name, dtype, dtype, dtype, name, dtype, name, dtype, name, dtype, op, dtype, name, dtype, name)
            else:  # comparator: lt / gt / le / ge
                d = kind.upper()
                text = ("%%%s (a: %s[], b: %s[]) -> pred[] {\n"
                        "  %%%s.a = %s[] parameter(0)\n"
                        "  %%%s.b = %s[] parameter(1)\n"
                        "  ROOT %%%s.r = pred[] compare(%s[] %%%s.a, %s[] %%%s.b), direction=%s\n}") % (
                    name, dtype, dtype, name, dtype, name, dtype, name, dtype, name, dtype, name, d)
            self.p.add_comp(name, text)
        return name

    # -- ops --
    def op_unary(self, cur):
        x = self.pick(cur)
        choices = ["negate", "copy"]
        if x.ty[0] in FLOATS:
            choices += ["tanh", "tanh"] + (["exponential", "exponential"] if x.mag <= 4 else [])
        op = self.rng.choice(choices)
        mag = 1.0 if op == "tanh" else (math.exp(x.mag) if op == "exponential" else x.mag)
        if op == "copy" and x.ty[1] and self.rng.random() < 0.5:
            # A copy that only reshards: the sharding is the point.
            c = self.emit("copy", x.ty, "copy", [x.name], mag=mag, shard=False)
            c.sharding = random_sharding(self.rng, x.ty, self.n)
            return c
        return self.emit(op, x.ty, op, [x.name], mag=mag)

    def op_binary(self, cur):
        x = self.pick(cur)
        y = self.value_of(x.ty, avoid=x) if self.rng.random() < 0.7 else x
        if self.rng.random() < 0.5:
            x, y = y, x
        op = self.rng.choice(["add", "multiply", "subtract", "maximum"])
        mag = {"add": x.mag + y.mag, "subtract": x.mag + y.mag, "maximum": max(x.mag, y.mag),
               "multiply": x.mag * y.mag}[op]
        if mag > MAX_MAG:
            op, mag = "maximum", max(x.mag, y.mag)
        return self.emit(op, x.ty, op, [x.name, y.name], mag=mag)

    def op_select(self, cur):
        x = self.pick(cur)
        y = self.value_of(x.ty, avoid=x)
        direction = self.rng.choice(["EQ", "NE", "LT", "LE", "GT", "GE"])
        c = self.emit("compare", ("pred", x.ty[1]), "compare", [x.name, y.name], attrs=", direction=" + direction)
        if self.rng.random() < 0.15:
            self.extra_outputs.append(c)  # a pred result too
        a, b = (x, y) if self.rng.random() < 0.5 else (y, x)
        return self.emit("select", x.ty, "select", [c.name, a.name, b.name], mag=max(a.mag, b.mag))

    def op_broadcast(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) < MAX_RANK)
        dims = list(x.ty[1])
        k = self.rng.randint(1, min(2, MAX_RANK - len(dims)))
        out = list(dims)
        pos = list(range(len(dims)))  # where operand dimension i lands
        for _ in range(k):
            at = self.rng.randint(0, len(out))
            out.insert(at, self.rng.choice([1, 2, 3, 4, 5, 6, 8]))
            pos = [p + 1 if p >= at else p for p in pos]
        attrs = ", dimensions={%s}" % ",".join(map(str, pos))
        return self.emit("broadcast", (x.ty[0], tuple(out)), "broadcast", [x.name], attrs=attrs, mag=x.mag)

    def op_transpose(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 2)
        r = len(x.ty[1])
        perm = list(range(r))
        while perm == sorted(perm):
            self.rng.shuffle(perm)
        out = tuple(x.ty[1][p] for p in perm)
        attrs = ", dimensions={%s}" % ",".join(map(str, perm))
        return self.emit("transpose", (x.ty[0], out), "transpose", [x.name], attrs=attrs, mag=x.mag)

    def op_reshape(self, cur):
        x = self.pick(cur)
        n = num_elements(x.ty[1])
        for _ in range(10):
            rank = self.rng.randint(1, 3)
            dims = [1] * rank
            for f in prime_factors(n):
                dims[self.rng.randrange(rank)] *= f
            if self.rng.random() < 0.2 and rank < MAX_RANK:
                dims.insert(self.rng.randint(0, rank), 1)
            if tuple(dims) != x.ty[1]:
                return self.emit("reshape", (x.ty[0], tuple(dims)), "reshape", [x.name], mag=x.mag)
        raise Skip("no reshape")

    def reduce_init(self, kind, dtype, identity=True):
        """The reduction's init constant: its identity, or (identity=False) some other value."""
        if not identity:
            return self.constant(dtype, self.rng.choice([1.0, 0.5, -1.0]) if dtype in FLOATS else self.rng.randint(-2, 2))
        if kind == "add":
            return self.constant(dtype, 0.0 if dtype in FLOATS else 0)
        if kind == "max":
            return self.constant(dtype, float("-inf") if dtype in FLOATS else -2147483648)
        return self.constant(dtype, float("inf") if dtype in FLOATS else 2147483647)

    def op_reduce(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dims = x.ty[1]
        kind = self.rng.choice(["add", "add", "max", "min"])
        if kind == "add":
            x = self.to_summable(x)
        dtype = x.ty[0]
        rdims = sorted(self.rng.sample(range(len(dims)), self.rng.randint(1, len(dims))))
        count = num_elements([dims[d] for d in rdims])
        init = self.reduce_init(kind, dtype, identity=self.rng.random() < 0.8)
        mag = x.mag * count + init.mag if kind == "add" else max(x.mag, init.mag)
        out = tuple(d for k, d in enumerate(dims) if k not in rdims)
        comp = self.scalar_comp(kind, dtype)
        attrs = ", dimensions={%s}, to_apply=%%%s" % (",".join(map(str, rdims)), comp)
        return self.emit("reduce", (dtype, out), "reduce", [x.name, init.name], attrs=attrs, mag=mag, comps=[comp])

    def op_argmax(self, cur):
        """A variadic reduce (value, index) picking the largest value, the smallest index among equal ones: exact and
        independent of the reduction order."""
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1 and v.ty[0] in ("f32", "s32"))
        dtype, dims = x.ty
        d = self.rng.randrange(len(dims))
        idx = self.emit("iota", ("s32", dims), "iota", attrs=", iota_dimension=%d" % d, mag=float(dims[d]))
        name = "argmax_" + dtype
        if name not in self.p.comps:
            t = dtype + "[]"
            text = "\n".join([
                "%%%s (a: %s, ai: s32[], b: %s, bi: s32[]) -> (%s, s32[]) {" % (name, t, t, t),
                "  %%%s.a = %s parameter(0)" % (name, t),
                "  %%%s.ai = s32[] parameter(1)" % name,
                "  %%%s.b = %s parameter(2)" % (name, t),
                "  %%%s.bi = s32[] parameter(3)" % name,
                "  %%%s.gt = pred[] compare(%s %%%s.a, %s %%%s.b), direction=GT" % (name, t, name, t, name),
                "  %%%s.eq = pred[] compare(%s %%%s.a, %s %%%s.b), direction=EQ" % (name, t, name, t, name),
                "  %%%s.lt = pred[] compare(s32[] %%%s.ai, s32[] %%%s.bi), direction=LT" % (name, name, name),
                "  %%%s.tie = pred[] and(pred[] %%%s.eq, pred[] %%%s.lt)" % (name, name, name),
                "  %%%s.pick = pred[] or(pred[] %%%s.gt, pred[] %%%s.tie)" % (name, name, name),
                "  %%%s.v = %s select(pred[] %%%s.pick, %s %%%s.a, %s %%%s.b)" % (name, t, name, t, name, t, name),
                "  %%%s.i = s32[] select(pred[] %%%s.pick, s32[] %%%s.ai, s32[] %%%s.bi)" % (name, name, name, name),
                "  ROOT %%%s.r = (%s, s32[]) tuple(%s %%%s.v, s32[] %%%s.i)" % (name, t, t, name, name),
                "}"])
            self.p.add_comp(name, text)
        vinit = self.reduce_init("max", dtype)
        iinit = self.constant("s32", 0)
        out = tuple(k for i, k in enumerate(dims) if i != d)
        ty = ("tuple", [(dtype, out), ("s32", out)])
        r = self.emit("argmax", ty, "reduce", [x.name, idx.name, vinit.name, iinit.name],
                      attrs=", dimensions={%d}, to_apply=%%%s" % (d, name), comps=[name])
        v = self.emit("gte", (dtype, out), "get-tuple-element", [r.name], attrs=", index=0", mag=x.mag)
        i = self.emit("gte", ("s32", out), "get-tuple-element", [r.name], attrs=", index=1", mag=float(dims[d]))
        if self.rng.random() < 0.5:
            self.extra_outputs.append(v)
            return i
        self.extra_outputs.append(i)
        return v

    def op_dot(self, cur):
        rng = self.rng
        x = self.to_summable(self.pick(cur, lambda v: 1 <= len(v.ty[1]) <= 3))
        dtype, dims = x.ty
        r = len(dims)
        nb = rng.choice([0, 0, 1]) if r >= 2 else 0
        nc = min(r - nb, rng.choice([1, 1, 1, 2, 0]))
        order = list(range(r))
        rng.shuffle(order)
        lb, lc = sorted(order[:nb]), sorted(order[nb:nb + nc])
        lf = [d for d in range(r) if d not in lb and d not in lc]
        nf = rng.choice([0, 1, 1])
        free = [rng.choice([1, 2, 3, 4, 5, 6, 8]) for _ in range(nf)]
        # rhs dimensions: batch, contracting and free, in a random order.
        roles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nf)]
        rng.shuffle(roles)
        rdims, rb, rc = [], [None] * nb, [None] * nc
        for pos, (role, i) in enumerate(roles):
            if role == "b":
                rdims.append(dims[lb[i]])
                rb[i] = pos
            elif role == "c":
                rdims.append(dims[lc[i]])
                rc[i] = pos
            else:
                rdims.append(free[i])
        if not rdims:
            raise Skip("scalar rhs")
        rfree = [pos for pos, (role, _) in enumerate(roles) if role == "f"]
        out = tuple([dims[d] for d in lb] + [dims[d] for d in lf] + [rdims[p] for p in rfree])
        if len(out) > MAX_RANK:
            raise Skip("rank")
        y = self.value_of((dtype, tuple(rdims)))
        k = num_elements([dims[d] for d in lc])
        attrs = ""
        if nb:
            attrs += ", lhs_batch_dims={%s}" % ",".join(map(str, lb))
        attrs += ", lhs_contracting_dims={%s}" % ",".join(map(str, lc))
        if nb:
            attrs += ", rhs_batch_dims={%s}" % ",".join(map(str, rb))
        attrs += ", rhs_contracting_dims={%s}" % ",".join(map(str, rc))
        return self.emit("dot", (dtype, out), "dot", [x.name, y.name], attrs=attrs, mag=x.mag * y.mag * k)

    def op_slice(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        parts, out = [], []
        for d in x.ty[1]:
            start = self.rng.randint(0, d - 1)
            limit = self.rng.randint(start + 1, d)
            stride = self.rng.choice([1, 1, 1, 2, 3])
            parts.append("[%d:%d%s]" % (start, limit, ":%d" % stride if stride > 1 else ""))
            out.append((limit - start + stride - 1) // stride)
        attrs = ", slice={%s}" % ", ".join(parts)
        return self.emit("slice", (x.ty[0], tuple(out)), "slice", [x.name], attrs=attrs, mag=x.mag)

    def op_concatenate(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dims = x.ty[1]
        d = self.rng.randrange(len(dims))
        ops = [x]
        for _ in range(self.rng.choice([1, 1, 2])):
            if self.rng.random() < 0.3:
                ops.append(x)
            else:
                od = list(dims)
                od[d] = self.rng.randint(1, 8)
                ops.append(self.value_of((x.ty[0], tuple(od))))
        self.rng.shuffle(ops)
        out = list(dims)
        out[d] = sum(o.ty[1][d] for o in ops)
        return self.emit("concatenate", (x.ty[0], tuple(out)), "concatenate", [o.name for o in ops],
                         attrs=", dimensions={%d}" % d, mag=max(o.mag for o in ops))

    def op_pad(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dtype = x.ty[0]
        pv = self.constant(dtype, self.rng.choice([0, 0, 1, -1]) * (1.0 if dtype in FLOATS else 1))
        parts, out = [], []
        for d in x.ty[1]:
            while True:
                lo, hi = self.rng.randint(-1, 3), self.rng.randint(-1, 3)
                interior = self.rng.choice([0, 0, 0, 1, 2])
                size = d + lo + hi + interior * (d - 1)
                if size >= 1 and lo + interior * (d - 1) + d >= 0:
                    break
            parts.append("%d_%d%s" % (lo, hi, "_%d" % interior if interior else ""))
            out.append(size)
        return self.emit("pad", (dtype, tuple(out)), "pad", [x.name, pv.name], attrs=", padding=" + "x".join(parts),
                         mag=max(x.mag, pv.mag))

    def op_reverse(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        r = len(x.ty[1])
        rd = sorted(self.rng.sample(range(r), self.rng.randint(1, r)))
        return self.emit("reverse", x.ty, "reverse", [x.name], attrs=", dimensions={%s}" % ",".join(map(str, rd)),
                         mag=x.mag)

    def op_iota_or_constant(self, cur):
        """An iota or a literal constant of the operand's shape, combined with it elementwise."""
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dtype, dims = x.ty
        if self.rng.random() < 0.5 and num_elements(dims) <= 32:
            c = self.emit("constant", x.ty, "constant", attrs=literal_text(self.rng, dtype, dims), mag=7.0)
        else:
            d = self.rng.randrange(len(dims))
            c = self.emit("iota", x.ty, "iota", attrs=", iota_dimension=%d" % d, mag=float(dims[d]))
        op = self.rng.choice(["add", "maximum", "multiply", "subtract"])
        a, b = (x, c) if self.rng.random() < 0.5 else (c, x)
        mag = a.mag * b.mag if op == "multiply" else a.mag + b.mag
        if mag > MAX_MAG:
            op = "maximum"
        return self.emit(op, x.ty, op, [a.name, b.name], mag=mag)

    def op_dynamic_slice(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        sizes, idx = [], []
        for d in x.ty[1]:
            s = self.rng.randint(1, d)
            sizes.append(s)
            # Out-of-range starts clamp to [0, d - s].
            idx.append(self.constant("s32", self.rng.randint(-2, d - s + 2)))
        return self.emit("dynamic-slice", (x.ty[0], tuple(sizes)), "dynamic-slice", [x.name] + [i.name for i in idx],
                         attrs=", dynamic_slice_sizes={%s}" % ",".join(map(str, sizes)), mag=x.mag)

    def op_convert(self, cur):
        x = self.pick(cur)
        src = x.ty[0]
        targets = [t for t in ("f32", "s32", "bf16") if t != src]
        if src in FLOATS and x.mag > 1e6:
            targets.remove("s32")
        to = self.rng.choice(targets)
        if to == "s32" and src in FLOATS and x.mag <= 2 and self.rng.random() < 0.7:
            # Values in [-1, 1] mostly convert to 0: scale them first to keep the result interesting.
            k = self.constant(src, 4.0)
            kb = self.emit("broadcast", x.ty, "broadcast", [k.name], attrs=", dimensions={}", mag=4.0, shard=False)
            x = self.emit("multiply", x.ty, "multiply", [x.name, kb.name], mag=x.mag * 4)
        mag = math.floor(x.mag) + 1 if to == "s32" else x.mag
        return self.emit("convert", (to, x.ty[1]), "convert", [x.name], mag=mag)


    def op_clamp(self, cur):
        x = self.pick(cur)
        dtype = x.ty[0]
        if self.rng.random() < 0.6:
            lo_v, hi_v = sorted(self.rng.sample([-2, -1, -0.5, 0, 0.25, 0.5, 1, 3], 2))
            if dtype not in FLOATS:
                lo_v, hi_v = int(math.floor(lo_v)), int(math.ceil(hi_v)) + 2
            lo, hi = self.constant(dtype, lo_v), self.constant(dtype, hi_v)
        else:
            lo, hi = self.value_of(x.ty, avoid=x), self.value_of(x.ty, avoid=x)
        return self.emit("clamp", x.ty, "clamp", [lo.name, x.name, hi.name], mag=max(lo.mag, hi.mag))

    def op_dynamic_update_slice(self, cur):
        x = self.pick(cur, lambda v: len(v.ty[1]) >= 1)
        dtype, dims = x.ty
        udims = tuple(self.rng.choice([d, self.rng.randint(1, d)]) for d in dims)
        if self.rng.random() < 0.5:
            upd = self.value_of((dtype, udims), avoid=x)
        else:
            # A slice of x itself, so the update is sharded like x where it can be.
            parts = ["[0:%d]" % u for u in udims]
            upd = self.emit("slice", (dtype, udims), "slice", [x.name], attrs=", slice={%s}" % ", ".join(parts),
                            mag=x.mag)
        idx = [self.constant("s32", self.rng.randint(-1, d - u + 1)) for d, u in zip(dims, udims)]
        return self.emit("dynamic-update-slice", x.ty, "dynamic-update-slice", [x.name, upd.name] + [i.name for i in idx],
                         mag=max(x.mag, upd.mag))

    def snapshot(self):
        return (self.p, len(self.p.insts), len(self.p.comp_order), self.num_params, len(self.extra_outputs),
                {k: list(v) for k, v in self.callees.items()})

    def rollback(self, snap):
        """Undoes everything emitted since snap (instructions, computations, parameters, outputs, callees)."""
        p, n, ncomps, nparams, nextra, callees = snap
        self.p = p
        for i in p.insts[n:]:
            del p.by_name[i.name]
        del p.insts[n:]
        for c in p.comp_order[ncomps:]:
            del p.comps[c]
        del p.comp_order[ncomps:]
        self.num_params = nparams
        del self.extra_outputs[nextra:]
        self.callees = callees

    def run_chain(self, cur, nops):
        """Appends up to nops random ops to the current computation, starting from cur; returns the last value."""
        names, weights = zip(*self.OPS)
        done = attempts = 0
        while done < nops and attempts < 200:
            attempts += 1
            op = self.rng.choices(names, weights)[0]
            snap = self.snapshot()
            try:
                cur = getattr(self, "op_" + op)(cur)
                done += 1
            except Skip:
                self.rollback(snap)
        return cur

    @contextlib.contextmanager
    def computation(self):
        """Builds a nested computation (a Program sharing the module's computations) instead of the current one."""
        saved = (self.p, self.extra_outputs, self.max_params)
        sub = self.new_program()
        sub.comps, sub.comp_order = self.p.comps, self.p.comp_order
        self.p, self.extra_outputs, self.max_params = sub, [], 0
        self.depth += 1
        try:
            yield sub
        finally:
            self.p, self.extra_outputs, self.max_params = saved
            self.depth -= 1

    def coerce(self, v, ty, base):
        """A value of type ty from v: v itself, a reshape, a convert, or base + broadcast(max(v))."""
        if v.ty == ty:
            return v
        if v.ty[0] == ty[0] and num_elements(v.ty[1]) == num_elements(ty[1]):
            return self.emit("reshape", ty, "reshape", [v.name], mag=v.mag)
        if v.ty[1] == ty[1]:
            return self.emit("convert", ty, "convert", [v.name], mag=v.mag)
        if v.ty[1]:
            init = self.reduce_init("max", v.ty[0])
            comp = self.scalar_comp("max", v.ty[0])
            v = self.emit("reduce", (v.ty[0], ()), "reduce", [v.name, init.name],
                          attrs=", dimensions={%s}, to_apply=%%%s" % (",".join(map(str, range(len(v.ty[1])))), comp),
                          mag=v.mag, comps=[comp])
        if v.ty[0] != ty[0]:
            v = self.emit("convert", (ty[0], ()), "convert", [v.name], mag=v.mag)
        b = self.emit("broadcast", ty, "broadcast", [v.name], attrs=", dimensions={}", mag=v.mag)
        return self.emit("add", ty, "add", [base.name, b.name], mag=base.mag + b.mag)

    def bound(self, v):
        """tanh for floats, clamp to [-64, 64] for integers: loop state stays bounded whatever the trip count."""
        if v.ty[0] in FLOATS:
            return self.emit("tanh", v.ty, "tanh", [v.name], mag=1.0)
        lo, hi = self.constant(v.ty[0], -64), self.constant(v.ty[0], 64)
        return self.emit("clamp", v.ty, "clamp", [lo.name, v.name, hi.name], mag=64.0)

    def chain_to(self, x, ty, nops):
        """A random chain from x brought back to type ty (bounded)."""
        last = self.run_chain(x, nops)
        return self.bound(self.coerce(last, ty, x))

    @staticmethod
    def bounded_mag(ty, mag):
        return max(mag, 1.0 if ty[0] in FLOATS else 64.0)

    def generate(self):
        rng = self.rng
        if rng.random() < 0.15:
            self.p.header_attrs.append("allow_spmd_sharding_propagation_to_parameters={true}")
        if rng.random() < 0.2:
            self.p.header_attrs.append("allow_spmd_sharding_propagation_to_output={true}")
        cur = None
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.08:
                # A tuple parameter (with a tuple sharding), taken apart right away.
                elems = [(self.rand_dtype(), self.rand_dims()) for _ in range(2)]
                tp = self.param(("tuple", elems))
                for j, e in enumerate(elems):
                    cur = self.emit("gte", e, "get-tuple-element", [tp.name], attrs=", index=%d" % j,
                                    mag=1.0 if e[0] in FLOATS else 8.0)
            else:
                cur = self.param((self.rand_dtype(), self.rand_dims()))
        cur = self.run_chain(cur, rng.randint(3, 12))
        # The root: the chain's last value, sometimes with other values nobody uses as a tuple.
        used = {o for i in self.p.insts for o in i.operands}
        loose = [i for i in self.p.insts if i.name not in used and i is not cur and not is_tuple(i.ty)
                 and i.opcode not in ("parameter", "constant")]
        outs = [cur] + [i for i in self.extra_outputs if i is not cur]
        if loose and rng.random() < 0.5:
            outs += rng.sample(loose, min(len(loose), rng.randint(1, 2)))
        outs = list(dict.fromkeys(outs))
        if rng.random() < 0.08:
            outs.append(rng.choice(outs))  # the same value twice, possibly in two shardings
        if len(outs) > 1:
            t = self.p.add(Inst(self.fresh("out"), ("tuple", [o.ty for o in outs]), "tuple", [o.name for o in outs]))
            if rng.random() < 0.5:
                t.sharding = random_sharding(rng, t.ty, self.n)
            root = t
        else:
            root = cur
            if root.sharding is None and root.opcode != "conditional" and rng.random() < 0.4:
                root.sharding = random_sharding(rng, root.ty, self.n)
        if root.opcode == "parameter":
            raise RuntimeError("generator produced no op")
        self.p.root = root.name
        if rng.random() < 0.9:
            self.p.prune()
        return self.p


def generate(seed, compiler=False):
    """The program for seed: one whose result depends on at least one parameter."""
    for attempt in range(100):
        p = Generator(seed * 1000003 + attempt if attempt else seed, compiler).generate()
        if p.params():
            return p
    raise RuntimeError("no program for seed %d" % seed)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("seed", type=int)
    ap.add_argument("-o", "--output", help="write the module here instead of stdout")
    ap.add_argument("--compiler", action="store_true", help="unsharded, with random layouts (see above)")
    args = ap.parse_args()
    text = generate(args.seed, args.compiler).render()
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
